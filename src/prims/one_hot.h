// SPDX-License-Identifier: Apache-2.0
#pragma once
// one_hot and nonzero: integer outputs built from index or truth values.
#include "core/primitive.h"

namespace spore::prims {

/// int64 index of shape S -> int64 of shape S + (num_classes), 1 at the index, else 0.
struct OneHotAttrs {
  int64_t num_classes = 0;
  static constexpr auto fields() { return std::make_tuple(field("num_classes", &OneHotAttrs::num_classes)); }
};
/// Coordinates of the `count` non-zero elements in row-major order, shape (count, rank).
/// The count is an attribute because the output's shape depends on values: the eager op counts
/// first; a traced one makes it a value symbol (shape.h), which the graph interpreter binds by
/// counting when the node runs (Primitive::value_sizes).
struct NonzeroAttrs {
  int64_t count = 0;
  static constexpr auto fields() { return std::make_tuple(field("count", &NonzeroAttrs::count)); }
};

const Primitive& one_hot_primitive();
const Primitive& nonzero_primitive();

/// Non-zero elements of a CPU tensor (NaN counts as non-zero).
int64_t count_nonzero(const Tensor& x);

}  // namespace spore::prims
