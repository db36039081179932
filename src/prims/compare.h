// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cstdint>

#include "core/primitive.h"

namespace spore::prims {

/// Comparisons and logical ops give bool; bitwise ops keep the (integer or bool) dtype.
enum class CompareOp : uint8_t {
  equal, not_equal, less, less_equal, greater, greater_equal,
  logical_and, logical_or, logical_xor, bitwise_and, bitwise_or, bitwise_xor, kCount
};

const Primitive& compare_primitive(CompareOp op);

}  // namespace spore::prims
