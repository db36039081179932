// SPDX-License-Identifier: Apache-2.0
#pragma once
// bind_sizes(x, sizes) -> x: the node that gives value symbols (shape.h) their sizes when a
// graph runs. Ops whose output shape a tensor's values give (an ONNX Reshape's shape input,
// topk's k as a tensor) take their input through it and use its symbols as sizes; the data edge
// orders the binding before them and keeps it alive through the passes.
#include "core/primitive.h"

namespace spore::prims {

/// One value symbol per element of the sizes input, in row-major order. `what`, when given, is
/// the error for a negative size: a node checking a rule of its inputs' values when the graph
/// runs binds a size of 0 when the rule holds and -1 when it does not (an ONNX Split's sizes
/// must add up to the axis).
struct BindSizesAttrs {
  SmallVec<int64_t, 6> sizes;
  std::string what;
  static constexpr auto fields() {
    return std::make_tuple(field("sizes", &BindSizesAttrs::sizes), optional_field("what", &BindSizesAttrs::what));
  }
};

const Primitive& bind_sizes_primitive();

}  // namespace spore::prims
