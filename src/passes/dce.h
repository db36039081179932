// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "ir/graph.h"

namespace spore::passes {

/// Dead-code elimination: drops every node none of whose outputs is used, directly or through
/// other dropped nodes, by an output of the graph. Only pure and random nodes are dropped (a
/// random node is a pure function of its key); state, I/O and collective nodes, and nodes whose
/// sub-graphs hold one, always stay. Recurses into sub-graphs, which keep their parameters and
/// outputs. Returns `g` itself when nothing was dropped.
ir::GraphPtr eliminate_dead_code(const ir::GraphPtr& g);

}  // namespace spore::passes
