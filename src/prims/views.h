// SPDX-License-Identifier: Apache-2.0
#pragma once
// View primitives: outputs share the input's storage (no kernel, no copy). Under a trace they
// are ordinary nodes; layout passes may turn them into copies inside compiled plans.
#include <optional>

#include "core/primitive.h"

namespace spore::prims {

struct ReshapeAttrs {
  Shape shape;  // fully specified (no -1)
  static constexpr auto fields() { return std::make_tuple(field("shape", &ReshapeAttrs::shape)); }
};
struct PermuteAttrs {
  SmallVec<int64_t, 6> axes;
  static constexpr auto fields() { return std::make_tuple(field("axes", &PermuteAttrs::axes)); }
};
/// Per axis: start, stop, step (step > 0; start/stop already clamped to [0, size]).
struct SliceAttrs {
  SmallVec<int64_t, 6> starts, stops, steps;
  static constexpr auto fields() {
    return std::make_tuple(field("starts", &SliceAttrs::starts), field("stops", &SliceAttrs::stops),
                           field("steps", &SliceAttrs::steps));
  }
};
struct BroadcastAttrs {
  Shape shape;
  static constexpr auto fields() { return std::make_tuple(field("shape", &BroadcastAttrs::shape)); }
};
struct DiagonalAttrs {
  int64_t offset = 0, axis1 = 0, axis2 = 1;
  static constexpr auto fields() {
    return std::make_tuple(field("offset", &DiagonalAttrs::offset), field("axis1", &DiagonalAttrs::axis1),
                           field("axis2", &DiagonalAttrs::axis2));
  }
};

const Primitive& reshape_primitive();
const Primitive& permute_primitive();
const Primitive& slice_primitive();
const Primitive& broadcast_to_primitive();
const Primitive& diagonal_primitive();
/// Identity view whose derivative is zero (spore::stop_gradient).
const Primitive& stop_gradient_primitive();

/// Strides that let `shape` view a tensor of `old_shape`/`old_strides`, if any (PyTorch's rule).
std::optional<Strides> view_strides(const Shape& old_shape, const Strides& old_strides, const Shape& shape);

}  // namespace spore::prims
