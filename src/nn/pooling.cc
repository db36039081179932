// SPDX-License-Identifier: Apache-2.0
#include "spore/nn/pooling.h"

#include "spore/ops.h"

namespace spore::nn {

MaxPool2d::MaxPool2d(IntList kernel, IntList stride, IntList padding, bool ceil_mode)
    : UnaryCell("MaxPool2d"),
      kernel_(std::move(kernel.values)),
      stride_(std::move(stride.values)),
      padding_(std::move(padding.values)),
      ceil_mode_(ceil_mode) {
  SPORE_CHECK(!kernel_.empty(), "[MaxPool2d] kernel_size is empty; give one or two sizes");
}

Tensor MaxPool2d::construct(const Tensor& x) {
  return ops::max_pool2d(x, {.kernel = kernel_, .stride = stride_, .padding = padding_, .ceil_mode = ceil_mode_});
}

AvgPool2d::AvgPool2d(IntList kernel, IntList stride, IntList padding, bool ceil_mode, bool count_include_pad)
    : UnaryCell("AvgPool2d"),
      kernel_(std::move(kernel.values)),
      stride_(std::move(stride.values)),
      padding_(std::move(padding.values)),
      ceil_mode_(ceil_mode),
      count_include_pad_(count_include_pad) {
  SPORE_CHECK(!kernel_.empty(), "[AvgPool2d] kernel_size is empty; give one or two sizes");
}

Tensor AvgPool2d::construct(const Tensor& x) {
  return ops::avg_pool2d(x, {.kernel = kernel_,
                             .stride = stride_,
                             .padding = padding_,
                             .ceil_mode = ceil_mode_,
                             .count_include_pad = count_include_pad_});
}

AdaptiveAvgPool2d::AdaptiveAvgPool2d(IntList output_size) : UnaryCell("AdaptiveAvgPool2d") {
  const auto& v = output_size.values;
  SPORE_CHECK(v.size() == 1 || v.size() == 2, "[AdaptiveAvgPool2d] output_size takes 1 or 2 values, got ", v.size());
  size_ = {v[0], v.size() == 2 ? v[1] : v[0]};
  SPORE_CHECK(size_[0] > 0 && size_[1] > 0, "[AdaptiveAvgPool2d] output_size must be positive");
}

Tensor AdaptiveAvgPool2d::construct(const Tensor& x) { return ops::adaptive_avg_pool2d(x, size_); }

}  // namespace spore::nn
