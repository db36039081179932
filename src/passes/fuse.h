// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "ir/graph.h"

namespace spore::passes {

/// Elementwise fusion (level 2): groups maximal connected sets of pure elementwise ops that the
/// loop program supports (codegen/loop_program.h: float32 or float64, bools as 0/1) and whose
/// outputs all have one shape (their inputs may broadcast to it) into `fused` nodes
/// (codegen/fused.h). A group needs at least two ops; 0-d literals it reads are copied into its
/// sub-graph; a member used outside the group becomes one of the node's outputs (at most
/// kMaxOutputs; a larger group is split in topological order). Never fuses control-flow, random,
/// state or non-elementwise nodes, and never merges a producer and consumer that another
/// outside node sits between (the result would be cyclic). Recurses into sub-graphs (branches,
/// loop bodies); binds fused nodes parsed from text. Keeps the signature; returns `g` itself
/// when nothing changed.
ir::GraphPtr fuse_elementwise(const ir::GraphPtr& g);

}  // namespace spore::passes
