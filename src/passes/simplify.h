// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "ir/graph.h"

namespace spore::passes {

/// Algebraic simplification: the rule table in simplify.cc run by the rewrite engine
/// (rewrite.h) to a fixed point. Rules: x*1, 1*x, x/1, x-(+0) -> x; x+0, 0+x -> x for integer
/// and bool x, and for floating x only with -0 (x + +0 turns -0 into +0, so it is kept: no
/// fast-math); neg(neg(x)) -> x; reshape, broadcast_to or cast to x's own shape or dtype -> x;
/// permute by the identity -> x; reshape(reshape(x)) -> one reshape. A rewrite applies only
/// when the result has exactly the node's output type, so `x_int32 * 1.0` (promoted) or a
/// weak x under a strong literal stays. Returns `g` itself when nothing was rewritten.
ir::GraphPtr simplify(const ir::GraphPtr& g);

}  // namespace spore::passes
