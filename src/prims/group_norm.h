// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "core/primitive.h"

namespace spore::prims {

/// Group norm of x (N, C, *) over C/groups channels at a time. Inputs: x, then weight and bias
/// (shape (C)) when the flags say so.
struct GroupNormAttrs {
  int64_t groups = 1;
  double eps = 1e-5;
  bool has_weight = false;
  bool has_bias = false;
  static constexpr auto fields() {
    return std::make_tuple(field("groups", &GroupNormAttrs::groups), field("eps", &GroupNormAttrs::eps),
                           field("has_weight", &GroupNormAttrs::has_weight),
                           field("has_bias", &GroupNormAttrs::has_bias));
  }
};

/// Outputs: y, then mean and rstd of shape (N, groups) in the statistics dtype (stats_dtype).
const Primitive& group_norm_primitive();

}  // namespace spore::prims
