// SPDX-License-Identifier: Apache-2.0
#pragma once
// The rewrite engine (shared/ARCHITECTURE.md, "The compiler"): rules are pattern -> replacement
// entries on pure nodes, kept in tables (simplify.cc holds the algebraic one), and one engine
// applies a table to a fixed point. A rule names the op at the root of its pattern and a
// function that matches the rest (the node's inputs, their producers, literals) and proposes a
// replacement. The engine, not the rule, guarantees that a replacement has exactly the node's
// output type (dtype, weak flag, shape, layout), so rules stay short and cannot change types.
#include <optional>
#include <span>
#include <variant>

#include "ir/graph.h"
#include "passes/graph_editor.h"

namespace spore::passes {

/// What a rule sees: a pure one-output node whose inputs are already rewritten (values of the
/// new graph), and the new graph built so far.
struct Match {
  const ir::Node& node;
  const GraphEditor& graph;

  /// Input i of the node.
  ir::ValueRef input(size_t i) const { return node.inputs()[i]; }
  /// The node producing input i, or null when it is a graph parameter.
  const ir::Node* producer(size_t i) const { return graph.producer(input(i)); }
  /// The literal (`constant` node) input i is, or null.
  const transforms::ConstantAttrs* literal(size_t i) const { return literal_at(graph, input(i)); }
  /// The node's attribute struct.
  template <class Attrs>
  const Attrs& attrs() const { return *static_cast<const Attrs*>(node.attrs()); }
};

/// A replacement: an existing value of the new graph, or a new node (its inputs values of the
/// new graph) that the engine matches again.
using Replacement = std::variant<ir::ValueRef, ir::NodePtr>;

/// One table entry.
struct Rule {
  const char* name;  // for messages, e.g. "mul_one"
  const char* op;    // the op at the pattern's root
  std::optional<Replacement> (*apply)(const Match& m);
};

/// Rewrites the pure one-output nodes of `g` and of its sub-graphs with `rules` until none
/// applies. A replacement whose type differs from the node's output type is not applied.
/// Returns `g` itself when no rule applied.
ir::GraphPtr rewrite(const ir::GraphPtr& g, std::span<const Rule> rules);

}  // namespace spore::passes
