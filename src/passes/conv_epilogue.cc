// SPDX-License-Identifier: Apache-2.0
#include "passes/conv_epilogue.h"

#include <optional>

#include "passes/dce.h"
#include "passes/epilogue_chain.h"
#include "passes/graph_editor.h"
#include "prims/batch_norm.h"
#include "prims/conv_fused.h"
#include "prims/unary.h"
#include "prims/views.h"

namespace spore::passes {
namespace {

using prims::PostKind;

bool is_float(ir::DType t) {
  return t == ir::DType::Float32 || t == ir::DType::Float64 || t == ir::DType::BFloat16 || t == ir::DType::Float16;
}

bool weight_gradient_shaped(const ir::Graph& g, const ir::Node& conv) {
  return prims::conv_is_weight_gradient_shaped(
      transforms::from_ir(std::get<ir::TensorType>(g.type_of(conv.inputs()[0]))).shape,
      transforms::from_ir(std::get<ir::TensorType>(g.type_of(conv.inputs()[1]))).shape,
      transforms::from_ir(std::get<ir::TensorType>(conv.outputs()[0])).shape);
}

// The chain that starts at conv node `k` (no links when nothing folds into it); it stops at a
// node another chain took (a residual add of two conv results folds into the first conv's).
EpilogueChain chain_at(const ir::Graph& g, const ValueReaders& uses, const std::vector<char>& folded, size_t k) {
  EpilogueChain c;
  const ir::Node& conv = *g.nodes()[k];
  const ir::TensorType* t = conv.outputs().size() == 1 ? std::get_if<ir::TensorType>(&conv.outputs()[0]) : nullptr;
  if (!t || !is_float(t->dtype) || t->shape.size() < 3 || weight_gradient_shaped(g, conv)) return c;
  c.nodes.push_back(k);
  extend_chain(g, uses, folded, /*take_batch_norm=*/true, *t, c);
  return c;
}

// scale = weight / sqrt(var + eps) and shift = bias - mean * scale of batch_norm node `bn`,
// shaped (C, 1, ...) to broadcast over a result of rank `rank`.
std::pair<ir::ValueRef, ir::ValueRef> scale_shift(GraphEditor& ed, const ir::Node& bn, size_t rank) {
  const auto& a = *static_cast<const prims::BatchNormAttrs*>(bn.attrs());
  std::vector<ir::ValueRef> in = {ir::ValueRef{}};  // input 0 is the chain's value, not emitted
  for (size_t k = 1; k < bn.inputs().size(); ++k) in.push_back(ed.map(bn.inputs()[k]));
  size_t i = 1;
  const std::optional<ir::ValueRef> w = a.has_weight ? std::optional(in[i++]) : std::nullopt;
  const std::optional<ir::ValueRef> b = a.has_bias ? std::optional(in[i++]) : std::nullopt;
  const ir::ValueRef mean = in[i], var = in[i + 1];
  const std::string& sc = bn.scope();
  const auto& vt = std::get<ir::TensorType>(ed.type_of(var));
  const ir::ValueRef e = emit_float_literal(ed, vt.dtype, a.eps, sc);
  auto none = std::make_shared<const NoAttrs>();
  auto unary = std::make_shared<const prims::UnaryAttrs>();
  const ir::ValueRef inv = emit_op(ed, "reciprocal", unary, {emit_op(ed, "sqrt", unary, {emit_op(ed, "add", none, {var, e}, sc)}, sc)}, sc);
  const ir::ValueRef scale = w ? emit_op(ed, "mul", none, {inv, *w}, sc) : inv;
  const ir::ValueRef ms = emit_op(ed, "mul", none, {mean, scale}, sc);
  const ir::ValueRef shift = b ? emit_op(ed, "sub", none, {*b, ms}, sc) : emit_op(ed, "neg", unary, {ms}, sc);
  Shape s = {vt.shape[0].value()};
  while (s.size() + 1 < rank) s.push_back(1);
  auto reshape = std::make_shared<const prims::ReshapeAttrs>(prims::ReshapeAttrs{s});
  return {emit_op(ed, "reshape", reshape, {scale}, sc), emit_op(ed, "reshape", reshape, {shift}, sc)};
}

// A value that stays the same from call to call unless its storage's version changes: a literal,
// or a parameter or captured tensor the graph never writes (plans compute what depends only on
// such values once while they stay unchanged: runtime::Plan::invariant_inputs).
bool unchanging(const ir::Graph& g, ir::ValueRef v) {
  if (v.node != ir::ValueRef::kParam) return g.nodes()[static_cast<size_t>(v.node)]->op() == transforms::kConstantOp;
  const ir::Role r = g.params()[static_cast<size_t>(v.index)].role;
  if (r != ir::Role::Constant && r != ir::Role::Parameter) return false;
  for (const ir::Output& o : g.outputs())
    if (o.updates && *o.updates == v.index) return false;
  return true;
}

// A batch_norm right after the conv whose conv weight, bias and BatchNorm inputs are all
// unchanging folds into the weights: conv(x, w * scale) + (b * scale + shift), as ONNX exporters
// do, and the plan computes the folded weights once. (Elsewhere it stays two per-channel
// post-ops, computed every call.)
bool folds_into_weights(const ir::Graph& g, const ir::Node& conv, const EpilogueChain& c) {
  if (c.links.empty() || c.links[0].batch_norm < 0) return false;
  const ir::Node& bn = *g.nodes()[static_cast<size_t>(c.links[0].batch_norm)];
  for (size_t i = 1; i < conv.inputs().size(); ++i)
    if (!unchanging(g, conv.inputs()[i])) return false;
  for (size_t i = 1; i < bn.inputs().size(); ++i)
    if (!unchanging(g, bn.inputs()[i])) return false;
  return true;
}

// Emits the conv_fused node of chain `c`; returns its result.
ir::ValueRef emit_chain(GraphEditor& ed, const EpilogueChain& c) {
  const ir::Graph& g = ed.old_graph();
  const ir::Node& conv = *g.nodes()[c.nodes[0]];
  const auto& ca = *static_cast<const prims::ConvAttrs*>(conv.attrs());
  auto a = std::make_shared<prims::ConvFusedAttrs>();
  a->stride = ca.stride, a->pad_l = ca.pad_l, a->pad_r = ca.pad_r, a->dilation = ca.dilation, a->groups = ca.groups;
  a->has_bias = conv.inputs().size() == 3;
  std::vector<ir::ValueRef> inputs = ed.map_inputs(conv);
  const size_t rank = std::get<ir::TensorType>(conv.outputs()[0]).shape.size();
  auto push = [&](PostKind kind, const std::string& op, double pa, double pb) { push_post_op(*a, kind, op, pa, pb); };
  size_t first = 0;
  if (folds_into_weights(g, conv, c)) {
    const ir::Node& bn = *g.nodes()[static_cast<size_t>(c.links[0].batch_norm)];
    const auto [scale, shift] = scale_shift(ed, bn, 2);  // (O): for the bias
    auto none = std::make_shared<const NoAttrs>();
    const std::string& sc = bn.scope();
    const auto& wt = std::get<ir::TensorType>(ed.type_of(inputs[1]));
    Shape per_out = {wt.shape[0].value()};
    while (per_out.size() < wt.shape.size()) per_out.push_back(1);
    auto reshape = std::make_shared<const prims::ReshapeAttrs>(prims::ReshapeAttrs{per_out});
    inputs[1] = emit_op(ed, "mul", none, {inputs[1], emit_op(ed, "reshape", reshape, {scale}, sc)}, sc);
    if (a->has_bias) inputs[2] = emit_op(ed, "add", none, {emit_op(ed, "mul", none, {inputs[2], scale}, sc), shift}, sc);
    else inputs.push_back(shift);
    a->has_bias = true;
    first = 1;
  }
  for (size_t li = first; li < c.links.size(); ++li) {
    const ChainLink& l = c.links[li];
    if (l.batch_norm >= 0) {
      const auto [scale, shift] = scale_shift(ed, *g.nodes()[static_cast<size_t>(l.batch_norm)], rank);
      push(PostKind::Binary, "mul", 0, 0);
      inputs.push_back(scale);
      push(PostKind::Binary, "add", 0, 0);
      inputs.push_back(shift);
      continue;
    }
    push(l.kind, l.op, l.a, l.b);
    if (l.kind == PostKind::Binary) inputs.push_back(ed.map(l.operand));
  }
  auto node = std::make_shared<const ir::Node>(prims::kConvFusedOp, std::move(a), std::move(inputs), conv.outputs(),
                                               conv.scope());
  return ed.add_checked(node)[0];
}

}  // namespace

ir::GraphPtr conv_epilogue(const ir::GraphPtr& g) {
  const auto& nodes = g->nodes();
  const ValueReaders uses(*g);
  // Per node: the chain ending there (emitted at its last node, where every operand exists).
  std::vector<int64_t> ends_chain(nodes.size(), -1);
  std::vector<char> folded(nodes.size(), 0);
  std::vector<EpilogueChain> chains;
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (nodes[k]->op() != "conv" || folded[k]) continue;
    EpilogueChain c = chain_at(*g, uses, folded, k);
    if (c.links.empty()) continue;
    for (size_t m : c.nodes) folded[m] = 1;
    ends_chain[c.nodes.back()] = static_cast<int64_t>(chains.size());
    chains.push_back(std::move(c));
  }
  bool sub = false;
  for (const ir::NodePtr& n : nodes) sub = sub || !n->subgraphs().empty();
  if (chains.empty() && !sub) return g;

  GraphEditor ed(g);
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (ends_chain[k] >= 0) {
      const ir::ValueRef y = emit_chain(ed, chains[static_cast<size_t>(ends_chain[k])]);
      // A folded batch_norm's statistics outputs have no reader (chain_at checked): binding them
      // to the result only completes the editor's map.
      std::vector<ir::ValueRef> now(nodes[k]->outputs().size(), y);
      ed.bind_node(k, now);
    } else if (!folded[k]) {
      ed.bind_node(k, ed.add(with_inputs(map_subgraphs(nodes[k], &conv_epilogue), ed.map_inputs(*nodes[k]))));
    }
  }
  // Literals that only post-ops read are attributes now.
  const ir::GraphPtr out = ed.finish();
  return out == g ? g : eliminate_dead_code(out);
}

}  // namespace spore::passes
