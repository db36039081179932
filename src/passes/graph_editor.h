// SPDX-License-Identifier: Apache-2.0
#pragma once
// Rebuilding a graph: passes read the old graph node by node and emit the new one through a
// GraphEditor, which renumbers values (old value -> new value) and, when every node and output
// came through untouched, hands back the old graph itself, so "unchanged" is pointer equality.
#include <span>
#include <vector>

#include "ir/graph.h"
#include "transforms/ir_bridge.h"

namespace spore::passes {

/// Builds a new graph with `g`'s name and parameters from nodes emitted in topological order.
class GraphEditor {
 public:
  explicit GraphEditor(ir::GraphPtr g);

  const ir::Graph& old_graph() const { return *old_; }
  /// The new value that an old value stands for (parameters map to themselves).
  ir::ValueRef map(ir::ValueRef old) const;
  /// map() of each of the node's inputs.
  std::vector<ir::ValueRef> map_inputs(const ir::Node& n) const;
  /// Binds the outputs of old node `k` to `now`, in order.
  void bind_node(size_t k, std::span<const ir::ValueRef> now);

  /// Appends a node whose inputs are new values; returns its outputs.
  std::vector<ir::ValueRef> add(ir::NodePtr n);
  /// add() for a node a pass made up (not copied from a graph): its types are checked first.
  std::vector<ir::ValueRef> add_checked(ir::NodePtr n);

  /// The node defining new value `v`, or null for a parameter.
  const ir::Node* producer(ir::ValueRef v) const;
  /// The type of new value `v`.
  const ir::Type& type_of(ir::ValueRef v) const;

  /// The new graph (outputs mapped, state aliases kept), or the old one when nothing changed.
  ir::GraphPtr finish() const;

 private:
  ir::GraphPtr old_;
  std::vector<std::vector<ir::ValueRef>> map_;  // per old node, the new value of each output
  std::vector<ir::NodePtr> nodes_;
};

/// Appends op(inputs) with attributes `attrs` in scope `scope`, its result types inferred by the
/// primitive (checked like add_checked); returns its first result.
ir::ValueRef emit_op(GraphEditor& ed, const std::string& op, std::shared_ptr<const void> attrs,
                     std::vector<ir::ValueRef> inputs, const std::string& scope);

/// Appends a strong 0-d literal of floating dtype `dt` and value `f` in scope `scope`.
ir::ValueRef emit_float_literal(GraphEditor& ed, ir::DType dt, double f, const std::string& scope);

/// The literal (a `constant` node's value) that new value `v` is, or null.
const transforms::ConstantAttrs* literal_at(const GraphEditor& ed, ir::ValueRef v);

/// `n` with other inputs (the same pointer when they are equal).
ir::NodePtr with_inputs(const ir::NodePtr& n, std::vector<ir::ValueRef> inputs);
/// `n` with other sub-graphs (the same pointer when they are the same graphs). Control-flow
/// attributes also carry their graphs, so they are updated to match.
ir::NodePtr with_subgraphs(const ir::NodePtr& n, std::vector<ir::GraphPtr> graphs);
/// `n` with `pass` applied to each of its sub-graphs (the same pointer when none changed).
ir::NodePtr map_subgraphs(const ir::NodePtr& n, ir::GraphPtr (*pass)(const ir::GraphPtr&));

}  // namespace spore::passes
