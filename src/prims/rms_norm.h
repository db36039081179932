// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "core/primitive.h"

namespace spore::prims {

/// RMS norm over the trailing dims from `axis` on: x * rsqrt(mean(x^2) + eps) [* weight].
struct RmsNormAttrs {
  int64_t axis = 0;
  double eps = 1e-6;
  bool has_weight = false;
  static constexpr auto fields() {
    return std::make_tuple(field("axis", &RmsNormAttrs::axis), field("eps", &RmsNormAttrs::eps),
                           field("has_weight", &RmsNormAttrs::has_weight));
  }
};

/// Outputs: y, then rstd of shape x.shape[:axis] in the statistics dtype.
const Primitive& rms_norm_primitive();

}  // namespace spore::prims
