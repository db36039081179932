// SPDX-License-Identifier: Apache-2.0
#include "passes/graph_editor.h"

#include "ir/verifier.h"
#include "spore/error.h"
#include "transforms/control_flow.h"

namespace spore::passes {

GraphEditor::GraphEditor(ir::GraphPtr g) : old_(std::move(g)), map_(old_->nodes().size()) {
  nodes_.reserve(old_->nodes().size());
}

ir::ValueRef GraphEditor::map(ir::ValueRef old) const {
  if (old.node == ir::ValueRef::kParam) return old;
  const auto& outs = map_[static_cast<size_t>(old.node)];
  SPORE_ASSERT(static_cast<size_t>(old.index) < outs.size(), "a pass used value (", old.node, ", ", old.index,
               ") of @", old_->name(), " before emitting its node");
  return outs[static_cast<size_t>(old.index)];
}

std::vector<ir::ValueRef> GraphEditor::map_inputs(const ir::Node& n) const {
  std::vector<ir::ValueRef> r;
  r.reserve(n.inputs().size());
  for (ir::ValueRef v : n.inputs()) r.push_back(map(v));
  return r;
}

void GraphEditor::bind_node(size_t k, std::span<const ir::ValueRef> now) {
  SPORE_ASSERT(now.size() == old_->nodes()[k]->outputs().size(), "node ", k, " of @", old_->name(), " has ",
               old_->nodes()[k]->outputs().size(), " outputs, bound to ", now.size(), " values");
  map_[k].assign(now.begin(), now.end());
}

std::vector<ir::ValueRef> GraphEditor::add(ir::NodePtr n) {
  const auto k = static_cast<int32_t>(nodes_.size());
  std::vector<ir::ValueRef> outs;
  for (size_t i = 0; i < n->outputs().size(); ++i) outs.push_back({k, static_cast<int32_t>(i)});
  nodes_.push_back(std::move(n));
  return outs;
}

std::vector<ir::ValueRef> GraphEditor::add_checked(ir::NodePtr n) {
  std::vector<ir::Type> types;
  for (ir::ValueRef v : n->inputs()) types.push_back(type_of(v));
  ir::check_node(*n, types);
  return add(std::move(n));
}

const ir::Node* GraphEditor::producer(ir::ValueRef v) const {
  return v.node == ir::ValueRef::kParam ? nullptr : nodes_[static_cast<size_t>(v.node)].get();
}

const ir::Type& GraphEditor::type_of(ir::ValueRef v) const {
  return v.node == ir::ValueRef::kParam ? old_->params()[static_cast<size_t>(v.index)].type
                                        : nodes_[static_cast<size_t>(v.node)]->outputs()[static_cast<size_t>(v.index)];
}

ir::GraphPtr GraphEditor::finish() const {
  std::vector<ir::Output> outs = old_->outputs();
  for (ir::Output& o : outs) o.value = map(o.value);
  bool same = outs == old_->outputs() && nodes_.size() == old_->nodes().size();
  for (size_t k = 0; same && k < nodes_.size(); ++k) same = nodes_[k] == old_->nodes()[k];
  if (same) return old_;
  return std::make_shared<const ir::Graph>(old_->name(), old_->params(), nodes_, std::move(outs));
}

ir::ValueRef emit_op(GraphEditor& ed, const std::string& op, std::shared_ptr<const void> attrs,
                     std::vector<ir::ValueRef> inputs, const std::string& scope) {
  const Primitive* p = find_primitive(op);
  SPORE_ASSERT(p != nullptr, "emit_op: no primitive ", op);
  std::vector<TensorType> in;
  for (ir::ValueRef v : inputs) in.push_back(transforms::from_ir(std::get<ir::TensorType>(ed.type_of(v))));
  OutTypes out;
  p->infer(attrs.get(), in, out);
  std::vector<ir::Type> types;
  for (int i = 0; i < out.n; ++i) types.emplace_back(transforms::to_ir(out.t[static_cast<size_t>(i)]));
  auto node = std::make_shared<const ir::Node>(op, std::move(attrs), std::move(inputs), std::move(types), scope);
  return ed.add_checked(node)[0];
}

ir::ValueRef emit_float_literal(GraphEditor& ed, ir::DType dt, double f, const std::string& scope) {
  transforms::ConstantAttrs c;
  c.dtype = transforms::from_ir(dt);
  c.weak = false;
  c.f = f;
  return ed.add(std::make_shared<const ir::Node>(transforms::kConstantOp, std::make_shared<const transforms::ConstantAttrs>(c),
                                                std::vector<ir::ValueRef>{},
                                                std::vector<ir::Type>{ir::TensorType{dt, false, {}, {}}}, scope))[0];
}

const transforms::ConstantAttrs* literal_at(const GraphEditor& ed, ir::ValueRef v) {
  const ir::Node* m = ed.producer(v);
  return m && m->op() == transforms::kConstantOp ? static_cast<const transforms::ConstantAttrs*>(m->attrs()) : nullptr;
}

ir::NodePtr with_inputs(const ir::NodePtr& n, std::vector<ir::ValueRef> inputs) {
  if (inputs == n->inputs()) return n;
  return std::make_shared<const ir::Node>(n->op(), n->attrs_ptr(), std::move(inputs), n->outputs(), n->scope(),
                                          n->subgraphs());
}

ir::NodePtr with_subgraphs(const ir::NodePtr& n, std::vector<ir::GraphPtr> graphs) {
  if (graphs == n->subgraphs()) return n;
  std::shared_ptr<const void> attrs = n->attrs_ptr();
  // Control-flow attributes keep their graphs (and a residual plan valid only for them) too.
  if (const Primitive* p = find_primitive(n->op()); p && transforms::is_control_flow(*p))
    attrs = transforms::attrs_with_subgraphs(*p, n->attrs(), graphs);
  return std::make_shared<const ir::Node>(n->op(), std::move(attrs), n->inputs(), n->outputs(), n->scope(),
                                          std::move(graphs));
}

ir::NodePtr map_subgraphs(const ir::NodePtr& n, ir::GraphPtr (*pass)(const ir::GraphPtr&)) {
  if (n->subgraphs().empty()) return n;
  std::vector<ir::GraphPtr> graphs;
  for (const ir::GraphPtr& g : n->subgraphs()) graphs.push_back(pass(g));
  return with_subgraphs(n, std::move(graphs));
}

}  // namespace spore::passes
