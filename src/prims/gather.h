// SPDX-License-Identifier: Apache-2.0
#pragma once
// The gather/scatter family. Indices are int64 (the ops cast int32); an index outside
// [0, size) is a user error naming the op, the index, the axis and its size.
#include "core/primitive.h"

namespace spore::prims {

/// out[..i..] = x[..index[..i..]..] on `axis` (PyTorch's gather; out has the index's shape;
/// index.shape[d] <= x.shape[d] on the other axes). index_select and take_along_axis use it
/// with broadcast (stride-0) indices.
struct GatherAttrs {
  int64_t axis = 0;
  static constexpr auto fields() { return std::make_tuple(field("axis", &GatherAttrs::axis)); }
};
/// out = x, then out[..index[..i..]..] = src[..i..] (or += when `add`), in row-major order of
/// the index so duplicate indices resolve deterministically (the last write wins).
struct ScatterAttrs {
  int64_t axis = 0;
  bool add = false;
  static constexpr auto fields() {
    return std::make_tuple(field("axis", &ScatterAttrs::axis), field("add", &ScatterAttrs::add));
  }
};

/// Inputs (x, index) -> x's dtype, index's shape.
const Primitive& gather_primitive();
/// Inputs (x, index, src) -> x's dtype and shape.
const Primitive& scatter_primitive();

/// Throws "[op] index 7 is out of range for axis 1 of size 5".
[[noreturn]] void throw_index_error(const char* op, int64_t index, int64_t axis, int64_t size);

}  // namespace spore::prims
