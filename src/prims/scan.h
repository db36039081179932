// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "core/primitive.h"

namespace spore::prims {

/// Attributes of the scan primitives: one normalized axis.
struct ScanAttrs {
  int64_t axis = 0;
  static constexpr auto fields() { return std::make_tuple(field("axis", &ScanAttrs::axis)); }
};

/// "cumsum" (`prod` false) or "cumprod": inclusive running sum/product along `axis`.
/// Integers and bool give int64; 16-bit floats accumulate in float32.
const Primitive& scan_primitive(bool prod);

}  // namespace spore::prims
