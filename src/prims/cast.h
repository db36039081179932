// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "core/primitive.h"

namespace spore::prims {

struct CastAttrs {
  DType dtype = DType::Float32;
  static constexpr auto fields() { return std::make_tuple(field("dtype", &CastAttrs::dtype)); }
};

/// Converts to attrs.dtype (float -> int truncates; -> bool tests != 0).
const Primitive& cast_primitive();
/// A contiguous copy (same dtype). Kept apart from cast so passes may drop no-op casts freely.
const Primitive& copy_primitive();

}  // namespace spore::prims
