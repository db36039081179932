// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "ir/graph.h"

namespace spore::passes {

/// Constant folding. A pure node (not control flow) whose inputs are all literals (`constant`
/// nodes) and whose outputs are all 0-d tensors is run once, through the same dispatch and
/// kernels the interpreter uses, and replaced by literals of exactly its output types (weak
/// flag included). This covers a `fill` of shape [] (no inputs). Only 0-d values become
/// literals: tensors from outside are graph inputs bound by reference (shared/ARCHITECTURE.md,
/// "The IR"), so nothing larger is ever folded. A node whose kernel fails is left to fail when
/// the graph runs. An `if` with a literal predicate, or a `switch` with a literal index (clamped
/// as the op does), is replaced by the taken branch's nodes, which are folded in turn. Recurses
/// into sub-graphs. Returns `g` itself when nothing was folded.
ir::GraphPtr fold_constants(const ir::GraphPtr& g);

}  // namespace spore::passes
