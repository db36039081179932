// SPDX-License-Identifier: Apache-2.0
#pragma once
// The verifier: whole-graph invariants that no single node can check.
#include <span>

#include "ir/graph.h"

namespace spore::ir {

/// Checks a node against its resolved input types: the token input of ordered effects, then the
/// op's own type check. Shared by GraphBuilder (at construction) and verify().
void check_node(const Node& n, std::span<const Type> input_types);

/// Checks `g` and, recursively, its sub-graphs: every use refers to a value defined earlier in the
/// same graph (dominance; sub-graphs are closed; nothing dangles), node types are consistent,
/// roles are valid, and state aliases update a parameter or buffer of the same type, at most one
/// write per input. Throws ir::Error naming the graph, node and values.
void verify(const Graph& g);

/// verify() for a graph used as a sub-graph: also requires its parameters to be data.
void verify_nested(const Graph& g);

}  // namespace spore::ir
