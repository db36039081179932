// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

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

// The index arithmetic of the kernel, shared with the interpolate rules (src/autodiff) so the
// gradient uses exactly the forward's sources and weights.

/// PyTorch's nearest_idx with no explicit scale: the source index of output index `dst`.
inline int64_t nearest_src(int64_t dst, int64_t in, int64_t out) {
  if (out == in) return dst;
  if (out == 2 * in) return dst >> 1;
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  return std::min(static_cast<int64_t>(std::floor(static_cast<float>(dst) * scale)), in - 1);
}

/// One output index of a linear resize: y = l0 * x[i0] + l1 * x[i1].
template <class Cm>
struct Lerp {
  int64_t i0, i1;
  Cm l0, l1;
};

/// PyTorch's area_pixel_compute_scale / compute_source_index_and_lambda for one dim, in the
/// compute type Cm (float, or double for float64).
template <class Cm>
std::vector<Lerp<Cm>> linear_table(int64_t in, int64_t out, bool align) {
  std::vector<Lerp<Cm>> t(static_cast<size_t>(out));
  const Cm ratio = align ? (out > 1 ? static_cast<Cm>(in - 1) / static_cast<Cm>(out - 1) : Cm(0))
                         : static_cast<Cm>(in) / static_cast<Cm>(out);
  for (int64_t d = 0; d < out; ++d) {
    if (in == out) {
      t[d] = {d, d, Cm(1), Cm(0)};
      continue;
    }
    const Cm src = align ? ratio * static_cast<Cm>(d) : std::max(ratio * (static_cast<Cm>(d) + Cm(0.5)) - Cm(0.5), Cm(0));
    const int64_t i0 = static_cast<int64_t>(src);
    const Cm l1 = std::min(std::max(src - static_cast<Cm>(i0), Cm(0)), Cm(1));
    t[d] = {i0, i0 + (i0 < in - 1 ? 1 : 0), Cm(1) - l1, l1};
  }
  return t;
}

}  // namespace spore::prims
