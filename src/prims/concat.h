// SPDX-License-Identifier: Apache-2.0
#pragma once
// Concatenation: a variadic, dtype-agnostic byte mover built on index_map.h. stack and the
// gradient of split/chunk are concat too.
#include "core/primitive.h"

namespace spore::prims {

/// Inputs share dtype and rank and agree on every axis but `axis` (the op promoted them).
struct ConcatAttrs {
  int64_t axis = 0;
  static constexpr auto fields() { return std::make_tuple(field("axis", &ConcatAttrs::axis)); }
};

/// Concatenation of all inputs along attrs.axis (already normalized).
const Primitive& concat_primitive();

}  // namespace spore::prims
