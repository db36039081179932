// SPDX-License-Identifier: Apache-2.0
#include "passes/matmul_epilogue.h"

#include "codegen/loop_program.h"
#include "passes/dce.h"
#include "passes/epilogue_chain.h"
#include "passes/graph_editor.h"
#include "prims/matmul_fused.h"

namespace spore::passes {
namespace {

using prims::PostKind;

// Output index -> whether it is a state update, per node output.
std::vector<std::vector<char>> state_updates(const ir::Graph& g) {
  std::vector<std::vector<char>> u(g.nodes().size());
  for (size_t k = 0; k < g.nodes().size(); ++k) u[k].assign(g.nodes()[k]->outputs().size(), 0);
  for (const ir::Output& o : g.outputs())
    if (o.updates && o.value.node != ir::ValueRef::kParam)
      u[static_cast<size_t>(o.value.node)][static_cast<size_t>(o.value.index)] = 1;
  return u;
}

// Per node output: whether something the fusion pass does not take reads it (a library op, a
// control-flow node, a graph output). A chain whose end only fused ops read gains nothing: the
// fusion group reading it takes the links as well, at no cost, where post-ops cost the GEMM
// time (measured on AVX-512, bench/RESULTS.md: a residual add before a layer norm, a scale
// before a softmax).
std::vector<std::vector<char>> read_outside_fusion(const ir::Graph& g) {
  std::vector<std::vector<char>> r(g.nodes().size());
  for (size_t k = 0; k < g.nodes().size(); ++k) r[k].assign(g.nodes()[k]->outputs().size(), 0);
  for (const ir::NodePtr& n : g.nodes())
    if (!codegen::is_fusable_op(n->op()) || !n->subgraphs().empty())
      for (ir::ValueRef v : n->inputs())
        if (v.node != ir::ValueRef::kParam) r[static_cast<size_t>(v.node)][static_cast<size_t>(v.index)] = 1;
  for (const ir::Output& o : g.outputs())
    if (o.value.node != ir::ValueRef::kParam) r[static_cast<size_t>(o.value.node)][static_cast<size_t>(o.value.index)] = 1;
  return r;
}

// A product whose result the pass may extend: one float32/bfloat16 result of rank >= 2 (the
// oneDNN kernel's dtypes), alpha 1 and a bias, if any, at beta 1.
bool foldable_product(const ir::Graph& g, const ir::Node& mm) {
  if (mm.op() != "matmul" || mm.outputs().size() != 1 || mm.inputs().size() < 2 || mm.inputs().size() > 3) return false;
  const auto* t = std::get_if<ir::TensorType>(&mm.outputs()[0]);
  if (!t || (t->dtype != ir::DType::Float32 && t->dtype != ir::DType::BFloat16) || t->shape.size() < 2 ||
      t->shape.size() > static_cast<size_t>(prims::kMaxEpilogueRank))
    return false;
  for (size_t i = 0; i < 2; ++i) {
    const auto* it = std::get_if<ir::TensorType>(&g.type_of(mm.inputs()[i]));
    if (!it || it->shape.size() < 2) return false;
  }
  const auto& a = *static_cast<const prims::MatmulAttrs*>(mm.attrs());
  return a.alpha == 1.0 && (mm.inputs().size() == 2 || a.beta == 1.0);
}

// Whether the fusion pass would rather have `operand`'s producer and its reader in one kernel.
// A producer another chain took is the end of that chain (a middle link has one reader): a
// matmul_fused result, not an elementwise one (a transformer's second residual add).
bool computed_elementwise(const ir::Graph& g, const std::vector<char>& folded, ir::ValueRef operand) {
  if (operand.node == ir::ValueRef::kParam || folded[static_cast<size_t>(operand.node)]) return false;
  const ir::Node& n = *g.nodes()[static_cast<size_t>(operand.node)];
  return n.op() != transforms::kConstantOp && codegen::is_fusable_op(n.op());
}

// The matmul_fused attributes of chain `c`, and its inputs in the old graph.
std::shared_ptr<prims::MatmulFusedAttrs> chain_attrs(const ir::Graph& g, const EpilogueChain& c,
                                                     std::vector<ir::ValueRef>& inputs) {
  const ir::Node& mm = *g.nodes()[c.nodes[0]];
  const auto& ma = *static_cast<const prims::MatmulAttrs*>(mm.attrs());
  auto a = std::make_shared<prims::MatmulFusedAttrs>();
  a->trans_a = ma.trans_a, a->trans_b = ma.trans_b;
  a->has_bias = mm.inputs().size() == 3;
  inputs = mm.inputs();
  for (const ChainLink& l : c.links) {
    push_post_op(*a, l.kind, l.op, l.a, l.b);
    if (l.kind == PostKind::Binary) inputs.push_back(l.operand);
  }
  return a;
}

// How many leading links of `c` the CPU kernel of matmul_fused would apply inside the product
// (KernelDef::fused_post_ops): the rest would run after it, one pass per op, where the fusion
// pass makes them one kernel. Symbolic dims (a dynamic batch) are asked about at a typical size.
size_t kernel_fuses(const ir::Graph& g, const EpilogueChain& c) {
  std::vector<ir::ValueRef> inputs;
  const auto attrs = chain_attrs(g, c, inputs);
  std::vector<TensorType> types;
  for (ir::ValueRef v : inputs) {
    TensorType t = transforms::from_ir(std::get<ir::TensorType>(g.type_of(v)));
    for (Dim& d : t.shape)
      if (is_symbolic(d)) d = 64;
    types.push_back(std::move(t));
  }
  try {
    for (const KernelDef& k : prims::matmul_fused_primitive().kernels[static_cast<int>(DeviceType::CPU)])
      if (!k.supports || k.supports(attrs.get(), types)) return k.fused_post_ops ? k.fused_post_ops(attrs.get(), types) : 0;
  } catch (const Error&) {  // a node the kernel cannot take stays unfused; a bad setting fails at prepare
  }
  return 0;
}

// Keeps the first `links` links of `c` (a clamp is two links of one node, kept or cut together)
// and the nodes they come from.
void truncate(const ir::Graph& g, EpilogueChain& c, size_t links) {
  size_t node = 1, link = 0;
  for (; node < c.nodes.size(); ++node) {
    const size_t next = link + (g.nodes()[c.nodes[node]]->op() == "clamp" ? 2 : 1);
    if (next > links) break;
    link = next;
  }
  c.nodes.resize(node);
  c.links.resize(link);
  if (c.links.empty()) c.nodes.clear();
}

EpilogueChain chain_at(const ir::Graph& g, const ValueReaders& uses, const std::vector<std::vector<char>>& updates,
                       const std::vector<std::vector<char>>& outside, const std::vector<char>& folded, size_t k) {
  EpilogueChain c;
  if (!foldable_product(g, *g.nodes()[k])) return c;
  c.nodes.push_back(k);
  extend_chain(g, uses, folded, /*take_batch_norm=*/false, std::get<ir::TensorType>(g.nodes()[k]->outputs()[0]), c);
  // Cut at the first link the fusion pass or the executor does better (matmul_epilogue.h).
  size_t link = 0;
  for (size_t node = 1; node < c.nodes.size(); ++node) {
    const ChainLink& l = c.links[link];
    if (l.kind == PostKind::Binary && computed_elementwise(g, folded, l.operand)) break;
    if (updates[c.nodes[node]][0]) break;
    link += g.nodes()[c.nodes[node]]->op() == "clamp" ? 2 : 1;
  }
  truncate(g, c, link);
  if (!c.links.empty()) truncate(g, c, kernel_fuses(g, c));
  // After the kernel's cut: the end it keeps may be read only by the next (fusable) link.
  if (!c.links.empty() && !outside[c.nodes.back()][0]) truncate(g, c, 0);
  return c;
}

ir::ValueRef emit_chain(GraphEditor& ed, const EpilogueChain& c) {
  const ir::Graph& g = ed.old_graph();
  std::vector<ir::ValueRef> old_inputs;
  auto a = chain_attrs(g, c, old_inputs);
  std::vector<ir::ValueRef> inputs;
  for (ir::ValueRef v : old_inputs) inputs.push_back(ed.map(v));
  const ir::Node& last = *g.nodes()[c.nodes.back()];
  auto node = std::make_shared<const ir::Node>(prims::kMatmulFusedOp, std::move(a), std::move(inputs), last.outputs(),
                                               g.nodes()[c.nodes[0]]->scope());
  return ed.add_checked(node)[0];
}

}  // namespace

ir::GraphPtr matmul_epilogue(const ir::GraphPtr& g) {
  const auto& nodes = g->nodes();
  const ValueReaders uses(*g);
  const auto updates = state_updates(*g);
  const auto outside = read_outside_fusion(*g);
  std::vector<int64_t> ends_chain(nodes.size(), -1);  // emitted at its last node, where every operand exists
  std::vector<char> folded(nodes.size(), 0);
  std::vector<EpilogueChain> chains;
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (folded[k]) continue;
    EpilogueChain c = chain_at(*g, uses, updates, outside, folded, k);
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
      ed.bind_node(k, std::span<const ir::ValueRef>(&y, 1));
    } else if (!folded[k]) {
      ed.bind_node(k, ed.add(with_inputs(map_subgraphs(nodes[k], &matmul_epilogue), ed.map_inputs(*nodes[k]))));
    }
  }
  // Literals that only post-ops read are attributes now.
  const ir::GraphPtr out = ed.finish();
  return out == g ? g : eliminate_dead_code(out);
}

}  // namespace spore::passes
