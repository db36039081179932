// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shape and dtype inference shared by the elementwise primitives (the "trait" defaults).
#include <span>

#include "core/primitive.h"

namespace spore::prims {

/// Same shape and dtype as the input.
inline void infer_same(std::span<const TensorType> in, OutTypes& out) {
  out.add(in[0].dtype, in[0].shape).weak = in[0].weak;
}

/// Broadcast of all inputs; `dtype` given by the caller. Inputs of an elementwise primitive
/// already share a dtype (the public op promoted them).
inline void infer_broadcast(const char* op, std::span<const TensorType> in, DType dtype, OutTypes& out) {
  Shape s = in[0].shape;
  bool weak = in[0].weak;
  for (size_t i = 1; i < in.size(); ++i) {
    s = broadcast_shapes(s, in[i].shape, op);
    weak = weak && in[i].weak;
  }
  out.add(dtype, std::move(s)).weak = weak;
}

/// Element count for cost estimates (a symbolic dim counts as 1).
inline double cost_numel(const Shape& s) {
  double n = 1;
  for (Dim d : s) n *= is_symbolic(d) ? 1 : static_cast<double>(d);
  return n;
}

/// Elementwise cost: one op per element, each operand read or written once.
inline Cost elementwise_cost(std::span<const TensorType> in, std::span<const TensorType> out, double flops_per = 1) {
  const double n = cost_numel(out[0].shape);
  double bytes = 0;
  for (auto& t : in) {
    const double m = cost_numel(t.shape);
    bytes += m * dtype_size(t.dtype);
  }
  return {n * flops_per, bytes + n * dtype_size(out[0].dtype)};
}

}  // namespace spore::prims
