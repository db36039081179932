// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "core/primitive.h"

namespace spore::prims {

/// Layer norm over the trailing dims from `axis` on. Inputs: x, then weight and bias (shaped
/// like the normalized dims) when the flags say so.
struct LayerNormAttrs {
  int64_t axis = 0;
  double eps = 1e-5;
  bool has_weight = false;
  bool has_bias = false;
  static constexpr auto fields() {
    return std::make_tuple(field("axis", &LayerNormAttrs::axis), field("eps", &LayerNormAttrs::eps),
                           field("has_weight", &LayerNormAttrs::has_weight),
                           field("has_bias", &LayerNormAttrs::has_bias));
  }
};

/// Outputs: y (x's dtype and shape), mean and rstd (x.shape[:axis], float32, or float64 for a
/// float64 x) kept for the vjp.
const Primitive& layer_norm_primitive();

/// The dtype norm statistics are kept in: float64 for float64, else float32.
inline DType stats_dtype(DType x) { return x == DType::Float64 ? DType::Float64 : DType::Float32; }

}  // namespace spore::prims
