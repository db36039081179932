// SPDX-License-Identifier: Apache-2.0
#include "passes/fold_constants.h"

#include <algorithm>

#include "autodiff/frames.h"
#include "passes/graph_editor.h"
#include "runtime/dispatch.h"
#include "transforms/control_flow.h"
#include "transforms/ir_bridge.h"

namespace spore::passes {
namespace {

using transforms::ConstantAttrs;

// Emits nodes of the old graph (or of a branch being inlined) into the new graph, folding each.
class Folder {
 public:
  explicit Folder(GraphEditor& ed) : ed_(ed) {}

  // Emits `n`, whose inputs `ins` are already new values; returns its outputs' new values.
  std::vector<ir::ValueRef> emit(const ir::NodePtr& old, std::vector<ir::ValueRef> ins) {
    ir::NodePtr n = with_inputs(map_subgraphs(old, &fold_constants), std::move(ins));
    const Primitive* p = find_primitive(n->op());
    if (p && (p->name == "if" || p->name == "switch") && literal(n->inputs()[0]))
      return inline_branch(n, p->name == "if");
    if (p && foldable(*p, *n))
      if (auto outs = evaluate(*p, *n)) return *outs;
    return ed_.add(n);
  }

 private:
  const ConstantAttrs* literal(ir::ValueRef v) const { return literal_at(ed_, v); }

  bool foldable(const Primitive& p, const ir::Node& n) const {
    if (n.info().effect != ir::Effect::Pure || transforms::is_control_flow(p)) return false;
    for (ir::ValueRef v : n.inputs())
      if (!literal(v)) return false;
    for (const ir::Type& t : n.outputs()) {
      const auto* tt = std::get_if<ir::TensorType>(&t);
      if (!tt || !tt->shape.empty() || !tt->layout.empty()) return false;
    }
    // A size in the attributes that is a symbol (a jit graph over a dynamic dimension: the
    // batch size as a fill's value) is known per call only: evaluating it now would fold the
    // symbol's table index into a literal.
    bool symbolic = false;
    if (n.attrs() != nullptr && p.attrs.map_dims != nullptr)
      p.attrs.map_dims(n.attrs(), [&symbolic](Dim d) {
        symbolic = true;
        return d;
      });
    return !symbolic;
  }

  // Runs the node's kernel on its literal inputs, exactly as the interpreter would.
  std::optional<std::vector<ir::ValueRef>> evaluate(const Primitive& p, const ir::Node& n) {
    std::vector<Tensor> ins;
    for (ir::ValueRef v : n.inputs()) ins.push_back(transforms::tensor_of(*literal(v)));
    runtime::Outputs out;
    try {
      // The pipeline may run inside a trace or under a tape (jit of grad): evaluate, not record.
      autodiff::SuspendAbove no_frames(0);
      out = runtime::dispatch(p, n.attrs(), ins);
    } catch (const Error&) {
      return std::nullopt;
    }
    std::vector<ir::ValueRef> refs;
    for (int i = 0; i < out.n; ++i) {
      const auto& type = std::get<ir::TensorType>(n.outputs()[static_cast<size_t>(i)]);
      ConstantAttrs c = transforms::constant_of(out.t[static_cast<size_t>(i)]);
      SPORE_ASSERT(transforms::to_ir(c.dtype) == type.dtype, "[fold_constants] ", n.op(), " computed a ",
                   dtype_name(c.dtype), " value for a ", ir::type_str(type), " output");
      c.weak = type.weak;
      auto lit = std::make_shared<const ir::Node>(transforms::kConstantOp, std::make_shared<const ConstantAttrs>(c),
                                                  std::vector<ir::ValueRef>{}, std::vector<ir::Type>{type}, n.scope());
      refs.push_back(ed_.add_checked(std::move(lit))[0]);
    }
    return refs;
  }

  // The taken branch's nodes, emitted in place of the node; its parameters are the operands.
  std::vector<ir::ValueRef> inline_branch(const ir::NodePtr& node, bool is_if) {
    const ir::Node& n = *node;
    const ConstantAttrs& c = *literal(n.inputs()[0]);
    const auto last = static_cast<int64_t>(n.subgraphs().size()) - 1;
    const int64_t taken = is_if ? (c.i != 0 ? 0 : 1) : std::clamp<int64_t>(c.i, 0, last);
    const ir::Graph& branch = *n.subgraphs()[static_cast<size_t>(taken)];
    // Branch results may differ from the node's in the weak flag only; inlining such a branch
    // would change the types its users were checked with, so it stays a node.
    for (size_t i = 0; i < branch.outputs().size(); ++i)
      if (!(branch.type_of(branch.outputs()[i].value) == n.outputs()[i])) return ed_.add(node);
    std::vector<std::vector<ir::ValueRef>> local(branch.nodes().size());
    auto map = [&](ir::ValueRef v) {
      return v.node == ir::ValueRef::kParam ? n.inputs()[static_cast<size_t>(v.index) + 1]
                                            : local[static_cast<size_t>(v.node)][static_cast<size_t>(v.index)];
    };
    for (size_t k = 0; k < branch.nodes().size(); ++k) {
      const ir::NodePtr& m = branch.nodes()[k];
      std::vector<ir::ValueRef> ins;
      for (ir::ValueRef v : m->inputs()) ins.push_back(map(v));
      local[k] = emit(m, std::move(ins));
    }
    std::vector<ir::ValueRef> outs;
    for (const ir::Output& o : branch.outputs()) outs.push_back(map(o.value));
    return outs;
  }

  GraphEditor& ed_;
};

}  // namespace

ir::GraphPtr fold_constants(const ir::GraphPtr& g) {
  GraphEditor ed(g);
  Folder folder(ed);
  for (size_t k = 0; k < g->nodes().size(); ++k) {
    const ir::NodePtr& n = g->nodes()[k];
    ed.bind_node(k, folder.emit(n, ed.map_inputs(*n)));
  }
  return ed.finish();
}

}  // namespace spore::passes
