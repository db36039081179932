// SPDX-License-Identifier: Apache-2.0
#pragma once
// Three-input elementwise primitives. All broadcast their inputs against each other.
#include <cstdint>

#include "core/primitive.h"

namespace spore::prims {

enum class TernaryOp : uint8_t {
  where,  // (cond: bool, a, b: one dtype) -> cond ? a : b
  clamp,  // (x, lo, hi: one dtype) -> min(max(x, lo), hi); NaN in any operand gives NaN
  lerp,   // (a, b, w: one float dtype) -> a + w * (b - a), PyTorch's two-sided formula
  kCount
};

const Primitive& ternary_primitive(TernaryOp op);

}  // namespace spore::prims
