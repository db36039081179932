// SPDX-License-Identifier: Apache-2.0
#pragma once
// A fused node's epilogue (prims/epilogue.h: conv_fused, matmul_fused) as oneDNN post-ops (private to src/backends/cpu/onednn_*). Each of our
// post-ops maps to one oneDNN post-op, except consecutive clips, which become one; a Binary
// operand is bound as DNNL_ARG_ATTR_MULTIPLE_POST_OP(its oneDNN index) | DNNL_ARG_SRC_1, except
// the first add of a full-shape operand, which becomes a `sum` (PostOpPlan::sum_input).
#include <vector>

#include "backends/cpu/onednn_common.h"
#include "prims/epilogue.h"

namespace spore::cpu::onednn {

/// The oneDNN form of a prefix of a post-op list.
struct PostOpPlan {
  dnnl::post_ops ops;
  size_t mapped = 0;  // post-ops [0, mapped) are in `ops`; the rest run after the primitive
  /// Per mapped Binary post-op: its oneDNN index, the input holding its operand, and whether
  /// that operand is channels-last (else row-major in the shape it broadcasts from).
  struct Operand {
    int index;
    size_t input;
    bool channels_last;
  };
  std::vector<Operand> operands;
  /// The input whose value the conv accumulates onto (oneDNN's `sum` post-op: the kernel copies
  /// it into the result first), or -1. A residual add of the result's shape becomes this: the
  /// brgemm kernels have no full-tensor binary post-op here (oneDNN then picks a gemm kernel on
  /// NCHW, ~20x slower on ResNet's 56x56 convs).
  int sum_input = -1;
};

/// Maps the longest prefix (of at most `limit` entries) of `a`'s post-ops that oneDNN computes as
/// we do (but for NaN through ReLU/clip/min/max, see onednn_post_ops.cc): ReLU, leaky ReLU,
/// ReLU6 and literal min/max (clip), literal add/sub/mul (linear), the smooth activations
/// (within the O2 tolerance), and add/sub/mul/min/max/div by an operand that is contiguous in
/// the shape it broadcasts from. `ep` is `a` resolved; `in` are the node's input types, `out` its
/// result (as the primitive writes it). With `allow_sum` false a full-shape add stays a binary
/// post-op (the matmul kernels take those; `sum` would need the operand copied into the result).
PostOpPlan map_post_ops(const prims::PostOpList& a, const prims::Epilogue& ep, std::span<const TensorType> in,
                        const TensorType& out, size_t limit, bool allow_sum = true);

/// True when the operand's buffer is laid out as map_post_ops described it.
bool operand_matches(const PostOpPlan::Operand& o, std::span<const Buffer> in);
/// True when every mapped operand buffer is.
bool operands_match(const PostOpPlan& p, std::span<const Buffer> in);

}  // namespace spore::cpu::onednn
