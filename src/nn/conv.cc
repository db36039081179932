// SPDX-License-Identifier: Apache-2.0
#include "spore/nn/conv.h"

#include "nn/param_init.h"
#include "spore/ops.h"

namespace spore::nn {
namespace {

// One value per spatial dim (a single value repeats), checked against `lo`.
std::vector<int64_t> dims(const char* cell, const char* what, const IntList& v, size_t n, int64_t lo) {
  SPORE_CHECK(v.values.size() == 1 || v.values.size() == n, "[", cell, "] ", what, " takes 1 or ", n,
              " values, got ", v.values.size());
  std::vector<int64_t> out = v.values.size() == 1 ? std::vector<int64_t>(n, v.values[0]) : v.values;
  for (int64_t x : out) SPORE_CHECK(x >= lo, "[", cell, "] ", what, " must be >= ", lo, ", got ", x);
  return out;
}

void check_channels(const char* cell, int64_t in, int64_t out, int64_t groups) {
  SPORE_CHECK(in > 0 && out > 0 && groups > 0, "[", cell, "] channels and groups must be positive, got in ", in,
              ", out ", out, ", groups ", groups);
  SPORE_CHECK(in % groups == 0 && out % groups == 0, "[", cell, "] in_channels ", in, " and out_channels ", out,
              " must both be divisible by groups ", groups);
}

Shape weight_shape(int64_t a, int64_t b, const std::vector<int64_t>& k) {
  Shape s{a, b};
  for (int64_t x : k) s.push_back(x);
  return s;
}

// PyTorch's default: the bias's fan_in is the weight's (dims 1... : in/groups * kernel for a
// convolution, out/groups * kernel for the transposed layout).
void reset_conv(Tensor& weight, Tensor& bias) {
  default_weight_(weight);
  if (bias.defined()) default_bias_(bias, init::fan_in_and_fan_out(weight.shape()).first);
}

}  // namespace

Conv1d::Conv1d(int64_t in, int64_t out, IntList kernel, IntList stride, IntList padding, IntList dilation,
               int64_t groups, bool with_bias)
    : UnaryCell("Conv1d"),
      stride_(dims("Conv1d", "stride", stride, 1, 1)),
      padding_(dims("Conv1d", "padding", padding, 1, 0)),
      dilation_(dims("Conv1d", "dilation", dilation, 1, 1)),
      groups_(groups) {
  check_channels("Conv1d", in, out, groups);
  const auto k = dims("Conv1d", "kernel_size", kernel, 1, 1);
  weight = init::empty(weight_shape(out, in / groups, k));
  register_parameter("weight", &weight);
  if (with_bias) {
    bias = init::empty({out});
    register_parameter("bias", &bias);
  }
  reset_own();  // the constructor draws what reset_parameters() redraws, by the same code
}

void Conv1d::reset_own() { reset_conv(weight, bias); }

Tensor Conv1d::construct(const Tensor& x) {
  return ops::conv1d(x, weight, bias, {.stride = stride_, .padding = padding_, .dilation = dilation_, .groups = groups_});
}

Conv2d::Conv2d(int64_t in, int64_t out, IntList kernel, IntList stride, IntList padding, IntList dilation,
               int64_t groups, bool with_bias)
    : UnaryCell("Conv2d"),
      stride_(dims("Conv2d", "stride", stride, 2, 1)),
      padding_(dims("Conv2d", "padding", padding, 2, 0)),
      dilation_(dims("Conv2d", "dilation", dilation, 2, 1)),
      groups_(groups) {
  check_channels("Conv2d", in, out, groups);
  const auto k = dims("Conv2d", "kernel_size", kernel, 2, 1);
  weight = init::empty(weight_shape(out, in / groups, k));
  register_parameter("weight", &weight);
  if (with_bias) {
    bias = init::empty({out});
    register_parameter("bias", &bias);
  }
  reset_own();  // the constructor draws what reset_parameters() redraws, by the same code
}

void Conv2d::reset_own() { reset_conv(weight, bias); }

Tensor Conv2d::construct(const Tensor& x) {
  return ops::conv2d(x, weight, bias, {.stride = stride_, .padding = padding_, .dilation = dilation_, .groups = groups_});
}

Conv2dTranspose::Conv2dTranspose(int64_t in, int64_t out, IntList kernel, IntList stride, IntList padding,
                                 IntList output_padding, int64_t groups, bool with_bias, IntList dilation)
    : UnaryCell("Conv2dTranspose"),
      stride_(dims("Conv2dTranspose", "stride", stride, 2, 1)),
      padding_(dims("Conv2dTranspose", "padding", padding, 2, 0)),
      output_padding_(dims("Conv2dTranspose", "output_padding", output_padding, 2, 0)),
      dilation_(dims("Conv2dTranspose", "dilation", dilation, 2, 1)),
      groups_(groups) {
  check_channels("Conv2dTranspose", in, out, groups);
  const auto k = dims("Conv2dTranspose", "kernel_size", kernel, 2, 1);
  // PyTorch takes fan_in from the weight's dim 1 (out/groups) for the transposed layout too.
  weight = init::empty(weight_shape(in, out / groups, k));
  register_parameter("weight", &weight);
  if (with_bias) {
    bias = init::empty({out});
    register_parameter("bias", &bias);
  }
  reset_own();  // the constructor draws what reset_parameters() redraws, by the same code
}

void Conv2dTranspose::reset_own() { reset_conv(weight, bias); }

Tensor Conv2dTranspose::construct(const Tensor& x) {
  return ops::conv_transpose2d(x, weight, bias,
                               {.stride = stride_, .padding = padding_, .dilation = dilation_, .groups = groups_},
                               output_padding_);
}

}  // namespace spore::nn
