// SPDX-License-Identifier: Apache-2.0
#pragma once
// Triangle masks of the last two axes (tril / triu) and masked_fill: copies that keep some
// elements and write a constant elsewhere.
#include "core/primitive.h"

namespace spore::prims {

/// Keeps element (i, j) of the last two axes when j - i <= diagonal (lower) or
/// j - i >= diagonal (upper); the rest is zero.
struct TriAttrs {
  int64_t diagonal = 0;
  bool upper = false;
  static constexpr auto fields() {
    return std::make_tuple(field("diagonal", &TriAttrs::diagonal), field("upper", &TriAttrs::upper));
  }
};
/// out = mask ? value : x, the bool mask broadcast to x's shape.
struct MaskedFillAttrs {
  double value = 0;        // floating and bool dtypes
  int64_t int_value = 0;   // integer dtypes (exact beyond 2^53)
  static constexpr auto fields() {
    return std::make_tuple(field("value", &MaskedFillAttrs::value), field("int_value", &MaskedFillAttrs::int_value));
  }
};

/// Input rank >= 2.
const Primitive& tri_primitive();
/// Inputs (x, mask: bool broadcastable to x).
const Primitive& masked_fill_primitive();

}  // namespace spore::prims
