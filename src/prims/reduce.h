// SPDX-License-Identifier: Apache-2.0
#pragma once
// The reduction primitives: one primitive per reduction kind, all sharing ReduceAttrs (var and
// std add a correction). Axes in the attributes are normalized, sorted and unique; the public
// ops (src/ops/reduction.cc) resolve "empty = all axes" before building the call.
#include "core/primitive.h"

namespace spore::prims {

/// What a reduction computes over its axes.
enum class ReduceOp : uint8_t {
  Sum, Mean, Prod, Max, Min, All, Any, Norm1, Norm2, NormInf, LogSumExp, Var, Std,
};
inline constexpr int kNumReduceOps = 13;

/// Attributes of every reduction primitive.
struct ReduceAttrs {
  SmallVec<int64_t, 6> axes;  // normalized, sorted, unique
  bool keepdims = false;
  int64_t correction = 0;  // var and std only: divide by max(0, n - correction)
  static constexpr auto fields() {
    return std::make_tuple(field("axes", &ReduceAttrs::axes), field("keepdims", &ReduceAttrs::keepdims),
                           field("correction", &ReduceAttrs::correction));
  }
};

/// Attributes of argmax / argmin: one normalized axis.
struct ArgReduceAttrs {
  int64_t axis = 0;
  bool keepdims = false;
  static constexpr auto fields() {
    return std::make_tuple(field("axis", &ArgReduceAttrs::axis), field("keepdims", &ArgReduceAttrs::keepdims));
  }
};

/// The primitive of one reduction kind ("reduce_sum", "reduce_mean", ..., "var", "std").
const Primitive& reduce_primitive(ReduceOp op);
/// "argmax" (`max` true) or "argmin": int64 index of the first extreme value (NaN counts as
/// the extreme, as in PyTorch).
const Primitive& arg_reduce_primitive(bool max);

/// The dtype a reduction gives for input dtype `in` (sum/prod of integers and bool -> int64,
/// all/any -> bool, else the input dtype).
DType reduce_out_dtype(ReduceOp op, DType in);
/// Output shape of reducing `axes` of `shape`.
Shape reduce_shape(const Shape& shape, std::span<const int64_t> axes, bool keepdims);

}  // namespace spore::prims
