// SPDX-License-Identifier: Apache-2.0
#include "passes/epilogue_chain.h"

#include "prims/batch_norm.h"
#include "prims/unary.h"

namespace spore::passes {
namespace {

using prims::PostKind;

bool is_binary_link(std::string_view op) {
  return op == "add" || op == "sub" || op == "mul" || op == "div" || op == "maximum" || op == "minimum";
}

const ir::TensorType* tensor(const ir::Type& t) { return std::get_if<ir::TensorType>(&t); }

// Broadcasts to `to` without growing it.
bool broadcasts_into(const ir::TensorType& t, const ir::TensorType& to) {
  if (t.dtype != to.dtype || t.shape.size() > to.shape.size()) return false;
  const size_t off = to.shape.size() - t.shape.size();
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (!(t.shape[d] == ir::Dim(1)) && !(t.shape[d] == to.shape[off + d])) return false;
  return true;
}

// The links that node `ui` adds to a chain whose running value is `cur` (of type `t`); empty
// when it cannot be folded in. A batch_norm is one link that conv_epilogue turns into two.
std::vector<ChainLink> match(const ir::Graph& g, const ValueReaders& uses, size_t ui, ir::ValueRef cur,
                             const ir::TensorType& t, bool take_batch_norm) {
  const ir::Node& u = *g.nodes()[ui];
  const ir::TensorType* ut = u.outputs().empty() ? nullptr : tensor(u.outputs()[0]);
  if (!ut || !(ut->shape == t.shape) || ut->dtype != t.dtype || !u.subgraphs().empty()) return {};
  if (prims::unary_op_named(u.op()) && u.inputs().size() == 1) {
    const auto& ua = *static_cast<const prims::UnaryAttrs*>(u.attrs());
    return {ChainLink{PostKind::Unary, u.op(), ua.a, ua.b, {}, -1}};
  }
  if (is_binary_link(u.op()) && u.inputs().size() == 2) {
    const bool first = u.inputs()[0] == cur, second = u.inputs()[1] == cur;
    if (first == second) return {};
    const ir::ValueRef other = u.inputs()[first ? 1 : 0];
    if (const transforms::ConstantAttrs* c = literal_of(g, other)) {
      if (transforms::to_ir(c->dtype) != t.dtype) return {};
      return {ChainLink{PostKind::BinaryScalar, u.op(), c->f, second ? 1.0 : 0.0, {}, -1}};
    }
    const ir::TensorType* ot = tensor(g.type_of(other));
    if (!ot || !broadcasts_into(*ot, t)) return {};
    return {ChainLink{PostKind::Binary, u.op(), second ? 1.0 : 0.0, 0, other, -1}};
  }
  if (u.op() == "clamp" && u.inputs().size() == 3 && u.inputs()[0] == cur) {
    const transforms::ConstantAttrs *lo = literal_of(g, u.inputs()[1]), *hi = literal_of(g, u.inputs()[2]);
    if (!lo || !hi || transforms::to_ir(lo->dtype) != t.dtype || transforms::to_ir(hi->dtype) != t.dtype) return {};
    return {ChainLink{PostKind::BinaryScalar, "maximum", lo->f, 0, {}, -1},
            ChainLink{PostKind::BinaryScalar, "minimum", hi->f, 0, {}, -1}};
  }
  if (take_batch_norm && u.op() == "batch_norm" && u.inputs()[0] == cur) {
    const auto& ba = *static_cast<const prims::BatchNormAttrs*>(u.attrs());
    // Only float32/float64: a 16-bit x keeps float32 statistics, and operands share x's dtype.
    if (ba.training || !ba.has_running || (t.dtype != ir::DType::Float32 && t.dtype != ir::DType::Float64)) return {};
    const auto k = static_cast<int32_t>(ui);
    if (uses.of({k, 1}) != 0 || uses.of({k, 2}) != 0) return {};  // the statistics it passes through are read
    if (!t.shape[1].is_const()) return {};  // scale and shift are shaped (C, 1, ...)
    return {ChainLink{PostKind::Binary, "", 0, 0, {}, static_cast<int64_t>(ui)}};
  }
  return {};
}

}  // namespace

ValueReaders::ValueReaders(const ir::Graph& g) : count(g.nodes().size()), reader(g.nodes().size()) {
  for (size_t k = 0; k < g.nodes().size(); ++k) {
    count[k].assign(g.nodes()[k]->outputs().size(), 0);
    reader[k].assign(g.nodes()[k]->outputs().size(), -1);
  }
  for (size_t k = 0; k < g.nodes().size(); ++k)
    for (ir::ValueRef v : g.nodes()[k]->inputs())
      if (v.node != ir::ValueRef::kParam) {
        ++count[static_cast<size_t>(v.node)][static_cast<size_t>(v.index)];
        reader[static_cast<size_t>(v.node)][static_cast<size_t>(v.index)] = static_cast<int64_t>(k);
      }
  for (const ir::Output& o : g.outputs())
    if (o.value.node != ir::ValueRef::kParam)
      count[static_cast<size_t>(o.value.node)][static_cast<size_t>(o.value.index)] += 2;  // never folded away
}

const transforms::ConstantAttrs* literal_of(const ir::Graph& g, ir::ValueRef v) {
  if (v.node == ir::ValueRef::kParam) return nullptr;
  const ir::Node& n = *g.nodes()[static_cast<size_t>(v.node)];
  return n.op() == transforms::kConstantOp ? static_cast<const transforms::ConstantAttrs*>(n.attrs()) : nullptr;
}

void extend_chain(const ir::Graph& g, const ValueReaders& uses, const std::vector<char>& folded, bool take_batch_norm,
                  const ir::TensorType& t, EpilogueChain& c) {
  ir::ValueRef cur{static_cast<int32_t>(c.nodes.back()), 0};
  while (uses.of(cur) == 1) {
    const int64_t u = uses.reader[static_cast<size_t>(cur.node)][static_cast<size_t>(cur.index)];
    if (folded[static_cast<size_t>(u)]) break;
    std::vector<ChainLink> more = match(g, uses, static_cast<size_t>(u), cur, t, take_batch_norm);
    if (more.empty()) break;
    c.links.insert(c.links.end(), more.begin(), more.end());
    c.nodes.push_back(static_cast<size_t>(u));
    cur = {static_cast<int32_t>(u), 0};
  }
}

}  // namespace spore::passes
