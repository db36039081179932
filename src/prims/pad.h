// SPDX-License-Identifier: Apache-2.0
#pragma once
// Padding (constant, reflect, replicate) and the axis re-orderings flip and roll: each output
// coordinate maps to one source coordinate per axis, so all three are table copies.
#include "core/primitive.h"

namespace spore::prims {

/// 0 = constant, 1 = reflect (edge not repeated), 2 = replicate (edge repeated).
enum class PadKind : int64_t { Constant = 0, Reflect = 1, Replicate = 2 };

/// Per axis (in axis order, not PyTorch's reversed list): elements added before and after
/// (both >= 0; the op turns negative pads into slices).
struct PadAttrs {
  SmallVec<int64_t, 6> before, after;
  PadKind mode = PadKind::Constant;
  double value = 0;        // the constant for floating and bool dtypes
  int64_t int_value = 0;   // the constant for integer dtypes (exact beyond 2^53)
  static constexpr auto fields() {
    return std::make_tuple(field("before", &PadAttrs::before), field("after", &PadAttrs::after),
                           field("mode", &PadAttrs::mode), field("value", &PadAttrs::value),
                           field("int_value", &PadAttrs::int_value));
  }
};
/// Reverses the listed axes (normalized, distinct).
struct FlipAttrs {
  SmallVec<int64_t, 6> axes;
  static constexpr auto fields() { return std::make_tuple(field("axes", &FlipAttrs::axes)); }
};
/// out[i] = x[(i - shift) mod n] per axis; one shift per axis of the input (0 = unchanged).
struct RollAttrs {
  SmallVec<int64_t, 6> shifts;
  static constexpr auto fields() { return std::make_tuple(field("shifts", &RollAttrs::shifts)); }
};

const Primitive& pad_primitive();
const Primitive& flip_primitive();
const Primitive& roll_primitive();

}  // namespace spore::prims
