// SPDX-License-Identifier: Apache-2.0
#pragma once
// Convolution cells over NC(H)W inputs (batched or not), PyTorch's parameter layout and default
// initialization: weight from kaiming_uniform(a = sqrt(5)), bias from U(-1/sqrt(fan_in), +).
#include "spore/nn/cell.h"
#include "spore/nn/int_list.h"

namespace spore::nn {

/// x (N, C_in, L) -> (N, C_out, L'); weight (C_out, C_in/groups, k).
class Conv1d : public UnaryCell {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, IntList kernel_size, IntList stride = 1, IntList padding = 0,
         IntList dilation = 1, int64_t groups = 1, bool bias = true);
  Tensor construct(const Tensor& x) override;

  Tensor weight;
  Tensor bias;

 private:
  std::vector<int64_t> stride_, padding_, dilation_;
  int64_t groups_;

 protected:
  void reset_own() override;
};

/// x (N, C_in, H, W) -> (N, C_out, H', W'); weight (C_out, C_in/groups, kh, kw).
class Conv2d : public UnaryCell {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, IntList kernel_size, IntList stride = 1, IntList padding = 0,
         IntList dilation = 1, int64_t groups = 1, bool bias = true);
  Tensor construct(const Tensor& x) override;

  Tensor weight;
  Tensor bias;

 private:
  std::vector<int64_t> stride_, padding_, dilation_;
  int64_t groups_;

 protected:
  void reset_own() override;
};

/// The transpose (gradient) of Conv2d; weight (C_in, C_out/groups, kh, kw) as PyTorch's
/// ConvTranspose2d, whose argument order this follows.
class Conv2dTranspose : public UnaryCell {
 public:
  Conv2dTranspose(int64_t in_channels, int64_t out_channels, IntList kernel_size, IntList stride = 1,
                  IntList padding = 0, IntList output_padding = 0, int64_t groups = 1, bool bias = true,
                  IntList dilation = 1);
  Tensor construct(const Tensor& x) override;

  Tensor weight;
  Tensor bias;

 private:
  std::vector<int64_t> stride_, padding_, output_padding_, dilation_;
  int64_t groups_;

 protected:
  void reset_own() override;
};

}  // namespace spore::nn
