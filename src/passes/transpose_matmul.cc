// SPDX-License-Identifier: Apache-2.0
#include "passes/transpose_matmul.h"

#include "codegen/loop_program.h"
#include "passes/dce.h"
#include "passes/graph_editor.h"
#include "prims/matmul.h"
#include "prims/views.h"

namespace spore::passes {
namespace {

bool is_transpose(const ir::Node& n) {
  if (n.op() != "permute") return false;
  const auto& axes = static_cast<const prims::PermuteAttrs*>(n.attrs())->axes;
  return axes.size() == 2 && axes[0] == 1 && axes[1] == 0;
}

const ir::TensorType* tensor_type(const ir::Type& t) { return std::get_if<ir::TensorType>(&t); }

// A plain 2-D product a @ b (no bias, no transpose flags) of one output.
bool is_plain_matmul(const ir::Node& n) {
  if (n.op() != "matmul" || n.inputs().size() != 2 || n.outputs().size() != 1) return false;
  const auto& a = *static_cast<const prims::MatmulAttrs*>(n.attrs());
  const ir::TensorType* t = tensor_type(n.outputs()[0]);
  return !a.trans_a && !a.trans_b && t && t->shape.size() == 2;
}

}  // namespace

ir::GraphPtr transpose_matmul(const ir::GraphPtr& g) {
  const auto& nodes = g->nodes();
  const size_t n = nodes.size();
  // Uses of each node's value: by nodes and by graph outputs.
  std::vector<int> uses(n, 0);
  for (const ir::NodePtr& node : nodes)
    for (ir::ValueRef v : node->inputs())
      if (v.node != ir::ValueRef::kParam) ++uses[static_cast<size_t>(v.node)];
  for (const ir::Output& o : g->outputs())
    if (o.value.node != ir::ValueRef::kParam) ++uses[static_cast<size_t>(o.value.node)];
  // Transposes read element by element: by an elementwise op (fused or not, it walks its
  // output's rows) or as a graph output (the caller's tensor). A matmul reads a transposed
  // operand as it is, at no cost, so a transpose only matmuls read is left alone.
  std::vector<char> read_elementwise(n, 0);
  for (const ir::NodePtr& node : nodes)
    if (codegen::is_fusable_op(node->op()))
      for (ir::ValueRef v : node->inputs())
        if (v.node != ir::ValueRef::kParam) read_elementwise[static_cast<size_t>(v.node)] = 1;
  for (const ir::Output& o : g->outputs())
    if (o.value.node != ir::ValueRef::kParam) read_elementwise[static_cast<size_t>(o.value.node)] = 1;
  // The products to rewrite, each at the transpose that is its only use.
  std::vector<char> rewrite(n, 0), skip(n, 0);
  bool any = false;
  for (size_t k = 0; k < n; ++k) {
    const ir::Node& t = *nodes[k];
    if (!is_transpose(t) || !read_elementwise[k] || t.inputs()[0].node == ir::ValueRef::kParam) continue;
    const auto m = static_cast<size_t>(t.inputs()[0].node);
    if (!is_plain_matmul(*nodes[m]) || uses[m] != 1) continue;
    rewrite[k] = 1;
    skip[m] = 1;
    any = true;
  }
  if (!any) return g;

  GraphEditor ed(g);
  auto permute_attrs = std::make_shared<const prims::PermuteAttrs>(prims::PermuteAttrs{{1, 0}});
  // x^T as a new value: the operand of x when x is itself a transpose, else a new permute.
  auto transposed = [&](ir::ValueRef old, const ir::NodePtr& at) -> ir::ValueRef {
    if (old.node != ir::ValueRef::kParam && is_transpose(*nodes[static_cast<size_t>(old.node)]))
      return ed.map(nodes[static_cast<size_t>(old.node)]->inputs()[0]);
    const ir::TensorType& t = std::get<ir::TensorType>(g->type_of(old));
    ir::TensorType tt = t;
    tt.shape = {t.shape[1], t.shape[0]};
    auto p = std::make_shared<const ir::Node>("permute", permute_attrs, std::vector<ir::ValueRef>{ed.map(old)},
                                              std::vector<ir::Type>{tt}, at->scope());
    return ed.add_checked(p)[0];
  };
  for (size_t k = 0; k < n; ++k) {
    const ir::NodePtr& node = nodes[k];
    if (skip[k]) continue;  // emitted at its transpose
    if (!rewrite[k]) {
      ed.bind_node(k, ed.add(with_inputs(node, ed.map_inputs(*node))));
      continue;
    }
    const ir::Node& mm = *nodes[static_cast<size_t>(node->inputs()[0].node)];
    const ir::ValueRef bt = transposed(mm.inputs()[1], node), at = transposed(mm.inputs()[0], node);
    auto product = std::make_shared<const ir::Node>("matmul", mm.attrs_ptr(), std::vector<ir::ValueRef>{bt, at},
                                                    node->outputs(), node->scope());
    const std::vector<ir::ValueRef> now = ed.add_checked(product);
    ed.bind_node(k, now);
  }
  // Transposes that only fed a rewritten product are dead now.
  return eliminate_dead_code(ed.finish());
}

}  // namespace spore::passes
