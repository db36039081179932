// SPDX-License-Identifier: Apache-2.0
#pragma once
// Factory primitives: no inputs; under a trace they are recorded like every other op.
#include "core/primitive.h"

namespace spore::prims {

struct FillAttrs {
  Shape shape;
  DType dtype = DType::Float32;
  double value = 0;       // used for floating and bool dtypes
  int64_t int_value = 0;  // used for integer dtypes (exact beyond 2^53)
  static constexpr auto fields() {
    return std::make_tuple(field("shape", &FillAttrs::shape), field("dtype", &FillAttrs::dtype),
                           field("value", &FillAttrs::value), field("int_value", &FillAttrs::int_value));
  }
};
/// out[i] = start + i * step for i < n (integers exact in int64).
struct ArangeAttrs {
  int64_t n = 0;
  double start = 0, step = 1;
  int64_t int_start = 0, int_step = 1;
  DType dtype = DType::Float32;
  static constexpr auto fields() {
    return std::make_tuple(field("n", &ArangeAttrs::n), field("start", &ArangeAttrs::start),
                           field("step", &ArangeAttrs::step), field("int_start", &ArangeAttrs::int_start),
                           field("int_step", &ArangeAttrs::int_step), field("dtype", &ArangeAttrs::dtype));
  }
};
/// PyTorch's linspace: symmetric from both ends so the endpoint is exact.
struct LinspaceAttrs {
  double start = 0, stop = 1;
  int64_t steps = 0;
  DType dtype = DType::Float32;
  static constexpr auto fields() {
    return std::make_tuple(field("start", &LinspaceAttrs::start), field("stop", &LinspaceAttrs::stop),
                           field("steps", &LinspaceAttrs::steps), field("dtype", &LinspaceAttrs::dtype));
  }
};

/// A 0-d tensor holding a size: `value` is a dimension (a size, or under jit a symbolic
/// expression, bound per call like a fill's shape). Ops that compute with a size (BatchNorm's
/// n / (n - 1) for the running variance) take it from here rather than as a literal, so that
/// the traces of two batch sizes differ only in dimensions and generalize into one graph over a
/// symbolic batch (transforms/jit_dynamic.h).
struct DimValueAttrs {
  int64_t value = 0;
  DType dtype = DType::Float64;
  static constexpr auto fields() {
    return std::make_tuple(field("value", &DimValueAttrs::value), field("dtype", &DimValueAttrs::dtype));
  }
};

const Primitive& fill_primitive();
const Primitive& arange_primitive();
const Primitive& linspace_primitive();
const Primitive& dim_value_primitive();

}  // namespace spore::prims
