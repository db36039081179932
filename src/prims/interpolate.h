// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "core/primitive.h"

namespace spore::prims {

/// Resizing of NCHW images to (out_h, out_w): nearest (PyTorch's 'nearest') or bilinear with
/// either align_corners convention.
struct InterpolateAttrs {
  int64_t out_h = 1;
  int64_t out_w = 1;
  bool bilinear = false;
  bool align_corners = false;
  static constexpr auto fields() {
    return std::make_tuple(field("out_h", &InterpolateAttrs::out_h), field("out_w", &InterpolateAttrs::out_w),
                           field("bilinear", &InterpolateAttrs::bilinear),
                           field("align_corners", &InterpolateAttrs::align_corners));
  }
};

/// Input (N, C, H, W) floating; output (N, C, out_h, out_w), same dtype.
const Primitive& interpolate_primitive();

}  // namespace spore::prims
