// SPDX-License-Identifier: Apache-2.0
#pragma once
// The shape rules are split by kind (views.cc, indexing.cc, sort.cc); shape.cc's
// install_shape_rules() calls these and holds the copying movers (concat, pad, flip, roll, tri).
// Private to src/autodiff/rules.
#include <span>
#include <vector>

#include "autodiff/rules/util.h"

namespace spore::autodiff {

void install_view_rules();      // reshape, permute, slice, broadcast_to, diagonal
void install_indexing_rules();  // gather, scatter (and scatter_add)
void install_sort_rules();      // sort, topk

namespace rules {

/// ops::pad with (before, after) given per axis in axis order (PyTorch's list starts at the last
/// axis); negative amounts crop (constant mode only). No padding gives x itself.
inline Tensor pad_axes(const Tensor& x, std::span<const int64_t> before, std::span<const int64_t> after,
                       ops::PadMode mode = ops::PadMode::Constant) {
  const size_t r = before.size();
  std::vector<int64_t> pads(2 * r, 0);
  bool any = false;
  for (size_t d = 0; d < r; ++d) {
    pads[2 * (r - 1 - d)] = before[d];
    pads[2 * (r - 1 - d) + 1] = after[d];
    any |= before[d] != 0 || after[d] != 0;
  }
  return any ? ops::pad(x, pads, mode, 0.0) : x;
}

/// Pads (or crops, when negative) one axis with zeros.
inline Tensor pad_axis(const Tensor& x, int64_t axis, int64_t before, int64_t after) {
  std::vector<int64_t> b(static_cast<size_t>(x.dim()), 0), e(static_cast<size_t>(x.dim()), 0);
  b[static_cast<size_t>(axis)] = before;
  e[static_cast<size_t>(axis)] = after;
  return pad_axes(x, b, e);
}

/// zeros of a value's type, on the device of `like` (a tangent or cotangent of the same call).
inline Tensor zeros_of(const TensorType& t, const Tensor& like) {
  return ops::zeros(t.shape, {t.dtype, like.device()});
}

}  // namespace rules
}  // namespace spore::autodiff
