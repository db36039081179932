// SPDX-License-Identifier: Apache-2.0
#pragma once
// Control flow that works in both modes. In PyNative these run as plain C++ control flow (a
// tape differentiates the path taken, so data-dependent loops just work); inside jit or vmap,
// where a traced value cannot be read, they become If / Switch / While / Scan nodes holding
// closed sub-graphs, and grad/jvp transform those sub-graphs.
//
// Operands and carries are TensorTrees (a Tensor converts implicitly); every branch, and every
// loop iteration, must return the same structure, dtypes and shapes.
#include <functional>
#include <utility>
#include <vector>

#include "spore/tree.h"

namespace spore {

using TreeFunction = std::function<TensorTree(const TensorTree&)>;

/// true_fn(operands) if pred (a 0-d bool tensor) else false_fn(operands).
TensorTree cond(const Tensor& pred, const TreeFunction& true_fn, const TreeFunction& false_fn,
                const TensorTree& operands);
/// branches[index](operands); index (a 0-d integer tensor) is clamped to the valid range.
TensorTree switch_case(const Tensor& index, const std::vector<TreeFunction>& branches, const TensorTree& operands);
/// How reverse mode keeps what a while_loop's backward needs.
struct WhileOptions {
  /// 0: every trip's residuals are kept (fastest; memory grows with the trip count). k > 0: only
  /// the carries entering every k-th trip are kept, and the backward recomputes each segment of
  /// k trips from its checkpoint, one segment at a time: memory for about trips/k + k carries
  /// (smallest near k = sqrt(trips)) for about one more forward pass. In both modes; in
  /// PyNative under grad the loop is then traced and recorded as one node rather than op by op,
  /// so cond_fn and body_fn must be traceable (no item(), no in-place writes).
  int64_t checkpoint_every = 0;
};
/// carry = init; while (cond_fn(carry)) carry = body_fn(carry); return carry. cond_fn returns a
/// 0-d bool tensor. Reverse mode works with a data-dependent trip count.
TensorTree while_loop(const std::function<Tensor(const TensorTree&)>& cond_fn, const TreeFunction& body_fn,
                      const TensorTree& init, const WhileOptions& options = {});
/// fn(carry, x) -> (carry, y) over the leading axis of every leaf of xs; returns the final carry
/// and the ys stacked on a new leading axis. `reverse` walks xs from the end.
using ScanFunction = std::function<std::pair<TensorTree, TensorTree>(const TensorTree& carry, const TensorTree& x)>;
std::pair<TensorTree, TensorTree> scan(const ScanFunction& fn, const TensorTree& init, const TensorTree& xs,
                                       bool reverse = false);
/// for (i = lower; i < upper; ++i) carry = body(i, carry); i is a 0-d int64 tensor. A scan
/// underneath, so it differentiates in both modes.
TensorTree fori_loop(int64_t lower, int64_t upper, const std::function<TensorTree(const Tensor& i, const TensorTree&)>& body,
                     const TensorTree& init);

}  // namespace spore
