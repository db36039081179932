// SPDX-License-Identifier: Apache-2.0
#include "spore/models/mobilenet.h"

#include <algorithm>

#include "spore/error.h"
#include "spore/nn/activation.h"
#include "spore/nn/conv.h"
#include "spore/nn/dense.h"
#include "spore/nn/dropout.h"
#include "spore/nn/init.h"
#include "spore/nn/normalization.h"
#include "spore/ops.h"

namespace spore::models {
namespace {

// torchvision's _make_divisible: round to a multiple of 8, never going down by more than 10%.
int64_t make_divisible(double v, int64_t divisor = 8) {
  int64_t n = std::max(divisor, static_cast<int64_t>(v + divisor / 2.0) / divisor * divisor);
  if (static_cast<double>(n) < 0.9 * v) n += divisor;
  return n;
}

// torchvision's init lives in reset_own, so reset_parameters() repeats it in the constructor's order.
class FanOutConv2d : public nn::Conv2d {
 public:
  FanOutConv2d(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups)
      : nn::Conv2d(in, out, kernel, stride, (kernel - 1) / 2, /*dilation=*/1, groups, /*bias=*/false) {
    post_init();
  }
  void reset_own() override {
    nn::Conv2d::reset_own();
    post_init();
  }

 private:
  void post_init() { nn::init::kaiming_normal_(weight, 0.0, nn::init::FanMode::FanOut); }
};

// The classifier's Dense: N(0, 0.01) weights, zero bias.
class HeadDense : public nn::Dense {
 public:
  HeadDense(int64_t in, int64_t out) : nn::Dense(in, out) { post_init(); }
  void reset_own() override {
    nn::Dense::reset_own();
    post_init();
  }

 private:
  void post_init() {
    nn::init::normal_(weight, 0.0, 0.01);
    nn::init::zeros_(bias);
  }
};

std::unique_ptr<nn::Conv2d> plain_conv(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1,
                                       int64_t groups = 1) {
  return std::make_unique<FanOutConv2d>(in, out, kernel, stride, groups);
}

// torchvision's Conv2dNormActivation: conv (".0"), BatchNorm (".1"), ReLU6.
std::unique_ptr<nn::SequentialCell> conv_bn_relu6(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1,
                                                  int64_t groups = 1) {
  return std::make_unique<nn::SequentialCell>(plain_conv(in, out, kernel, stride, groups),
                                              std::make_unique<nn::BatchNorm2d>(out), std::make_unique<nn::ReLU6>());
}

}  // namespace

InvertedResidual::InvertedResidual(int64_t inp, int64_t oup, int64_t stride, int64_t expand_ratio)
    : nn::UnaryCell("InvertedResidual"), use_res_connect_(stride == 1 && inp == oup) {
  SPORE_CHECK(stride == 1 || stride == 2, "[InvertedResidual] stride must be 1 or 2, got ", stride);
  SPORE_CHECK(inp > 0 && oup > 0 && expand_ratio >= 1, "[InvertedResidual] channels must be positive and expand_ratio ",
              ">= 1, got inp ", inp, ", oup ", oup, ", expand_ratio ", expand_ratio);
  const int64_t hidden = inp * expand_ratio;
  conv = std::make_unique<nn::SequentialCell>();
  if (expand_ratio != 1) conv->add(conv_bn_relu6(inp, hidden, 1));
  conv->add(conv_bn_relu6(hidden, hidden, 3, stride, hidden));
  conv->add(plain_conv(hidden, oup, 1));
  conv->add(std::make_unique<nn::BatchNorm2d>(oup));
  register_cell("conv", conv.get());
}

Tensor InvertedResidual::construct(const Tensor& x) { return use_res_connect_ ? x + (*conv)(x) : (*conv)(x); }

MobileNetV2::MobileNetV2(int64_t num_classes, double width_mult, int64_t in_channels, double dropout)
    : nn::UnaryCell("MobileNetV2"), in_channels_(in_channels) {
  SPORE_CHECK(num_classes >= 1 && in_channels >= 1, "[MobileNetV2] num_classes and in_channels must be positive, got ",
              num_classes, " and ", in_channels);
  SPORE_CHECK(width_mult > 0, "[MobileNetV2] width_mult must be positive, got ", width_mult);
  // (expand ratio t, channels c, repeats n, first stride s), as in the paper and torchvision.
  constexpr int64_t kSetting[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                      {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int64_t input_channel = make_divisible(32 * width_mult);
  const int64_t last_channel = make_divisible(1280 * std::max(1.0, width_mult));
  features = std::make_unique<nn::SequentialCell>();
  features->add(conv_bn_relu6(in_channels, input_channel, 3, 2));
  for (const auto& [t, c, n, s] : kSetting) {
    const int64_t out = make_divisible(static_cast<double>(c) * width_mult);
    for (int64_t i = 0; i < n; ++i) {
      features->add(std::make_unique<InvertedResidual>(input_channel, out, i == 0 ? s : 1, t));
      input_channel = out;
    }
  }
  features->add(conv_bn_relu6(input_channel, last_channel, 1));
  auto fc = std::make_unique<HeadDense>(last_channel, num_classes);
  classifier = std::make_unique<nn::SequentialCell>(std::make_unique<nn::Dropout>(dropout), std::move(fc));
  register_cell("features", features.get());
  register_cell("classifier", classifier.get());
}

Tensor MobileNetV2::construct(const Tensor& x) {
  SPORE_CHECK(x.dim() == 4 && x.shape()[1] == in_channels_, "[MobileNetV2] expects (N, ", in_channels_,
              ", H, W) images, got ", shape_str(x.shape()), "; build the model with in_channels matching the data");
  return (*classifier)(ops::mean((*features)(x), {2, 3}));
}

std::unique_ptr<MobileNetV2> mobilenet_v2(int64_t num_classes, double width_mult, int64_t in_channels) {
  return std::make_unique<MobileNetV2>(num_classes, width_mult, in_channels);
}

}  // namespace spore::models
