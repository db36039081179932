// SPDX-License-Identifier: Apache-2.0
#pragma once
// GraphBuilder: the checked way to make a Graph. Every node is type-checked as it is added
// (its inputs exist, ordered effects take tokens, the op's own check), so errors point at the
// op that caused them rather than at a later verify().
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace spore::ir {

/// Builds one graph; sub-graphs are built by their own builders and passed to add().
class GraphBuilder {
 public:
  /// `name` is the graph's text name, an identifier.
  explicit GraphBuilder(std::string name);

  /// Adds a graph input.
  ValueRef param(Type type, Role role = Role::Data);
  /// Changes the role of input `index` (a trace learns that a captured tensor is state when
  /// the traced function writes it).
  void set_role(int32_t index, Role role);
  /// Adds a node and returns its outputs; throws ir::Error if it does not type-check.
  std::vector<ValueRef> add(const std::string& op, std::shared_ptr<const void> attrs, std::vector<ValueRef> inputs,
                            std::vector<Type> outputs, std::string scope = {}, std::vector<GraphPtr> subgraphs = {});
  /// add() for a node with one output.
  ValueRef add1(const std::string& op, std::shared_ptr<const void> attrs, std::vector<ValueRef> inputs, Type output,
                std::string scope = {}, std::vector<GraphPtr> subgraphs = {});
  /// Marks `v` as a graph output; `updates` = j makes it the new value of state input j.
  void output(ValueRef v, std::optional<int32_t> updates = std::nullopt);
  /// The type of a value defined so far.
  const Type& type_of(ValueRef v) const;
  /// Finishes the graph and verifies it.
  GraphPtr build();

 private:
  void check_defined(ValueRef v, const std::string& what) const;

  std::string name_;
  std::vector<Param> params_;
  std::vector<NodePtr> nodes_;
  std::vector<Output> outputs_;
};

}  // namespace spore::ir
