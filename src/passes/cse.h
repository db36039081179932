// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "ir/graph.h"

namespace spore::passes {

/// Common-subexpression elimination: a pure node (sub-graphs included) with the same op, equal
/// attributes (bit for bit: -0 is not 0), the same inputs (after earlier merges), sub-graphs
/// that compute the same (names and scopes aside) and the same output types as an earlier node
/// is replaced by that node's outputs; a max pool whose input is pooled again later with indices
/// (a max pool's backward) computes the indices too, and the later pool merges into it. Random, state, I/O
/// and collective nodes are never merged. Recurses into sub-graphs first, so branches that
/// become equal there compare equal. The merged-away node's scope is dropped with it. Returns
/// `g` itself when nothing was merged.
ir::GraphPtr eliminate_common_subexpressions(const ir::GraphPtr& g);

}  // namespace spore::passes
