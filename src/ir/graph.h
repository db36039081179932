// SPDX-License-Identifier: Apache-2.0
#pragma once
// The IR's data: a Graph of parameters, nodes in topological order and outputs. Values are SSA
// and named by position (a parameter index, or a node and one of its outputs), so a reference
// resolves only inside its own graph: a sub-graph cannot even name an outer value, which makes
// "sub-graphs are closed" a property of the representation that the verifier confirms.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/op_info.h"
#include "ir/type.h"

namespace spore::ir {

/// An SSA value: output `index` of node `node`, or parameter `index` when node is kParam.
struct ValueRef {
  static constexpr int32_t kParam = -1;
  int32_t node = kParam;
  int32_t index = 0;
  bool operator==(const ValueRef&) const = default;
};

/// What a graph input is: data (a call argument), parameter (trainable), buffer (non-trainable
/// state such as BatchNorm statistics) or constant (a captured tensor bound by reference).
enum class Role : uint8_t { Data, Parameter, Buffer, Constant };
/// Text name of a role ("data").
const char* role_name(Role r);

/// A graph input.
struct Param {
  Type type;
  Role role = Role::Data;
  bool operator==(const Param&) const = default;
};

/// A graph output; `updates` = j marks a state write: the value replaces input j after the call.
struct Output {
  ValueRef value;
  std::optional<int32_t> updates = std::nullopt;
  bool operator==(const Output&) const = default;
};

using GraphPtr = std::shared_ptr<const Graph>;

/// One op application. Immutable; the constructor checks what a node can check alone (op
/// registered, attributes present iff the op has them, token rules of ordered effects, scope
/// text). Types of inputs are checked where they are known: by the builder and the verifier.
class Node {
 public:
  Node(std::string op, std::shared_ptr<const void> attrs, std::vector<ValueRef> inputs,
       std::vector<Type> outputs, std::string scope = {}, std::vector<GraphPtr> subgraphs = {});

  const std::string& op() const { return op_; }
  const OpInfo& info() const { return *info_; }
  /// The opaque attribute payload; null when the op takes none.
  const void* attrs() const { return attrs_.get(); }
  const std::shared_ptr<const void>& attrs_ptr() const { return attrs_; }
  const std::vector<ValueRef>& inputs() const { return inputs_; }
  const std::vector<Type>& outputs() const { return outputs_; }
  /// The Cell path that emitted the node, e.g. "encoder/layers.3/attn"; kept by every pass.
  const std::string& scope() const { return scope_; }
  /// Closed sub-graphs (branches, loop bodies); their inputs are explicit operands.
  const std::vector<GraphPtr>& subgraphs() const { return subgraphs_; }

  /// Structural equality, comparing attributes through the op's equal_attrs.
  bool operator==(const Node& o) const;

 private:
  std::string op_;
  const OpInfo* info_;
  std::shared_ptr<const void> attrs_;
  std::vector<ValueRef> inputs_;
  std::vector<Type> outputs_;
  std::string scope_;
  std::vector<GraphPtr> subgraphs_;
};

using NodePtr = std::shared_ptr<const Node>;

/// A function: parameters, nodes in topological order, outputs. Constructing one checks nothing
/// across nodes; GraphBuilder::build and parse_graph run verify(), and passes should too.
class Graph {
 public:
  Graph(std::string name, std::vector<Param> params, std::vector<NodePtr> nodes, std::vector<Output> outputs);

  /// Name used in the text form (`@main`), an identifier.
  const std::string& name() const { return name_; }
  const std::vector<Param>& params() const { return params_; }
  const std::vector<NodePtr>& nodes() const { return nodes_; }
  const std::vector<Output>& outputs() const { return outputs_; }

  /// True when `v` names a parameter or a node output of this graph.
  bool defines(ValueRef v) const;
  /// The type of a value this graph defines (check defines() first).
  const Type& type_of(ValueRef v) const;

  /// Structural equality: same names, params, nodes (deeply, sub-graphs included) and outputs.
  bool operator==(const Graph& o) const;

 private:
  std::string name_;
  std::vector<Param> params_;
  std::vector<NodePtr> nodes_;
  std::vector<Output> outputs_;
};

}  // namespace spore::ir
