// SPDX-License-Identifier: Apache-2.0
#pragma once
// The geometry of a block of images for the image transforms: (N, H, W) or (N, C, H, W).
#include <cstring>

#include "spore/data/transforms.h"
#include "spore/ops/creation.h"

namespace spore::data {

struct ImageBlock {
  int64_t n = 0, c = 1, h = 0, w = 0;
  bool has_channels = false;
  /// The block's shape with a new height and width.
  Shape with_hw(int64_t hh, int64_t ww) const {
    return has_channels ? Shape{n, c, hh, ww} : Shape{n, hh, ww};
  }
};

inline ImageBlock image_block(const Tensor& x, const std::string& op) {
  SPORE_CHECK(x.dim() == 3 || x.dim() == 4, "[", op, "] samples must be images (H, W) or (C, H, W), got samples of shape ",
              shape_str(std::span<const Dim>(x.shape().begin() + 1, x.shape().end())),
              "; decoded (H, W, C) images need to_tensor() or hwc_to_chw() first");
  ImageBlock b;
  b.n = x.size(0);
  b.has_channels = x.dim() == 4;
  if (b.has_channels) b.c = x.size(1);
  b.h = x.size(-2);
  b.w = x.size(-1);
  return b;
}

/// The bytes of `value` in `dtype` (fill values of crops and erasing).
inline void fill_bytes(DType dtype, double value, void* dst) {
  const Tensor t = ops::full(Shape{}, Scalar(value), {dtype});
  std::memcpy(dst, t.data_ptr(), dtype_size(dtype));
}

/// Calls f.template operator()<U>() with U an unsigned integer of the dtype's width: data
/// movement transforms copy elements as raw bits.
template <class F>
void by_width(DType dtype, F&& f) {
  switch (dtype_size(dtype)) {
    case 1: f.template operator()<uint8_t>(); break;
    case 2: f.template operator()<uint16_t>(); break;
    case 4: f.template operator()<uint32_t>(); break;
    default: f.template operator()<uint64_t>(); break;
  }
}

/// Salts keep two kinds of random transforms with the same seed from drawing the same numbers.
inline uint64_t transform_key(uint64_t seed, uint64_t salt, uint64_t epoch, int64_t id) {
  return sample_key(seed ^ salt, epoch, static_cast<uint64_t>(id));
}

}  // namespace spore::data
