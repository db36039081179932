// SPDX-License-Identifier: Apache-2.0
#pragma once
// What passes may do with a node, by effect (shared/ARCHITECTURE.md, "State, randomness and
// effects"). A node's sub-graphs count as part of it: a branch that prints makes its `if`
// ordered even though `if` itself is pure.
#include "ir/graph.h"

namespace spore::passes {

/// True when the node and everything in its sub-graphs is pure: CSE may merge it.
bool is_pure(const ir::Node& n);
/// True when dropping the node unused changes nothing: pure, or random (a pure function of the
/// key in its attributes), sub-graphs included. DCE may remove it.
bool is_removable(const ir::Node& n);

}  // namespace spore::passes
