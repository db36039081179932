// SPDX-License-Identifier: Apache-2.0
#include "passes/matmul_bias.h"

#include <optional>

#include "passes/graph_editor.h"
#include "prims/matmul.h"

namespace spore::passes {
namespace {

const ir::TensorType* tensor(const ir::Type& t) { return std::get_if<ir::TensorType>(&t); }

// How many readers each node output has (a graph output counts as one).
std::vector<std::vector<int>> use_counts(const ir::Graph& g) {
  std::vector<std::vector<int>> n(g.nodes().size());
  for (size_t k = 0; k < g.nodes().size(); ++k) n[k].assign(g.nodes()[k]->outputs().size(), 0);
  auto count = [&](ir::ValueRef v) {
    if (v.node != ir::ValueRef::kParam) ++n[static_cast<size_t>(v.node)][static_cast<size_t>(v.index)];
  };
  for (const ir::NodePtr& node : g.nodes())
    for (ir::ValueRef v : node->inputs()) count(v);
  for (const ir::Output& o : g.outputs()) count(o.value);
  return n;
}

// A vector over the last dim of `out`: (N) or (1, ..., 1, N), same dtype, strong or weak alike.
bool is_row_bias(const ir::TensorType& b, const ir::TensorType& out) {
  if (b.dtype != out.dtype || b.shape.empty() || b.shape.size() > out.shape.size() || out.shape.empty()) return false;
  if (!(b.shape.back() == out.shape.back())) return false;
  for (size_t d = 0; d + 1 < b.shape.size(); ++d)
    if (!(b.shape[d] == ir::Dim(1))) return false;
  return true;
}

// For add node `k`: the input position holding the foldable product (0 or 1), or none.
std::optional<size_t> product_operand(const ir::Graph& g, const std::vector<std::vector<int>>& uses, size_t k) {
  const ir::Node& add = *g.nodes()[k];
  if (add.op() != "add" || add.inputs().size() != 2) return std::nullopt;
  const ir::TensorType* out = tensor(add.outputs()[0]);
  if (!out) return std::nullopt;
  for (size_t i = 0; i < 2; ++i) {
    const ir::ValueRef p = add.inputs()[i], bias = add.inputs()[1 - i];
    if (p.node == ir::ValueRef::kParam) continue;
    const ir::Node& mm = *g.nodes()[static_cast<size_t>(p.node)];
    if (mm.op() != "matmul" || mm.inputs().size() != 2) continue;
    if (uses[static_cast<size_t>(p.node)][static_cast<size_t>(p.index)] != 1) continue;
    const ir::TensorType* prod = tensor(mm.outputs()[0]);
    const ir::TensorType* b = tensor(g.type_of(bias));
    // The sum has the product's type: the bias neither widens nor promotes it.
    if (!prod || !b || !(*prod == *out) || !is_row_bias(*b, *prod) || prod->shape.size() < 2) continue;
    bool matrices = true;  // vector operands take no bias in the matmul primitive
    for (ir::ValueRef v : mm.inputs()) matrices = matrices && tensor(g.type_of(v)) && tensor(g.type_of(v))->shape.size() >= 2;
    if (!matrices) continue;
    const auto& at = *static_cast<const prims::MatmulAttrs*>(mm.attrs());
    if (at.alpha != 1.0) continue;
    return i;
  }
  return std::nullopt;
}

}  // namespace

ir::GraphPtr matmul_bias(const ir::GraphPtr& g) {
  const auto& nodes = g->nodes();
  const auto uses = use_counts(*g);
  std::vector<int> fold_at(nodes.size(), -1);  // per add: its product's operand position
  std::vector<char> folded(nodes.size(), 0);   // matmuls emitted at their add instead
  bool any = false, sub = false;
  for (size_t k = 0; k < nodes.size(); ++k) {
    sub = sub || !nodes[k]->subgraphs().empty();
    if (auto i = product_operand(*g, uses, k)) {
      fold_at[k] = static_cast<int>(*i);
      folded[static_cast<size_t>(nodes[k]->inputs()[*i].node)] = 1;
      any = true;
    }
  }
  if (!any && !sub) return g;
  GraphEditor ed(g);
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (folded[k]) continue;  // its add emits it
    if (fold_at[k] < 0) {
      ed.bind_node(k, ed.add(with_inputs(map_subgraphs(nodes[k], &matmul_bias), ed.map_inputs(*nodes[k]))));
      continue;
    }
    const ir::Node& add = *nodes[k];
    const size_t i = static_cast<size_t>(fold_at[k]);
    const ir::Node& mm = *nodes[static_cast<size_t>(add.inputs()[i].node)];
    auto at = std::make_shared<prims::MatmulAttrs>(*static_cast<const prims::MatmulAttrs*>(mm.attrs()));
    at->alpha = 1.0, at->beta = 1.0;
    std::vector<ir::ValueRef> in = ed.map_inputs(mm);
    in.push_back(ed.map(add.inputs()[1 - i]));
    const auto y = ed.add_checked(std::make_shared<const ir::Node>("matmul", std::move(at), std::move(in), add.outputs(),
                                                                   mm.scope()));
    ed.bind_node(static_cast<size_t>(add.inputs()[i].node), y);  // completes the map; nothing else reads it
    ed.bind_node(k, y);
  }
  return ed.finish();
}

}  // namespace spore::passes
