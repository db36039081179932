// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <array>

#include "spore/nn/cell.h"
#include "spore/nn/int_list.h"

namespace spore::nn {

/// Max over kernel windows of (N, C, H, W); stride defaults to the kernel.
class MaxPool2d : public UnaryCell {
 public:
  explicit MaxPool2d(IntList kernel_size, IntList stride = {}, IntList padding = 0, bool ceil_mode = false);
  Tensor construct(const Tensor& x) override;

 private:
  std::vector<int64_t> kernel_, stride_, padding_;
  bool ceil_mode_;
};

/// Mean over kernel windows; stride defaults to the kernel.
class AvgPool2d : public UnaryCell {
 public:
  explicit AvgPool2d(IntList kernel_size, IntList stride = {}, IntList padding = 0, bool ceil_mode = false,
                     bool count_include_pad = true);
  Tensor construct(const Tensor& x) override;

 private:
  std::vector<int64_t> kernel_, stride_, padding_;
  bool ceil_mode_, count_include_pad_;
};

/// Mean pooling to a fixed output size (one number: square).
class AdaptiveAvgPool2d : public UnaryCell {
 public:
  explicit AdaptiveAvgPool2d(IntList output_size);
  Tensor construct(const Tensor& x) override;

 private:
  std::array<int64_t, 2> size_;
};

}  // namespace spore::nn
