// SPDX-License-Identifier: Apache-2.0
#pragma once
// MobileNetV2 with torchvision's layout and parameter names: features.0 (conv-BN-ReLU6 stem),
// features.1..17 (inverted residual blocks, each `conv.N...`), features.18 (1x1 conv-BN-ReLU6),
// then global average pooling and classifier (0: Dropout, 1: Dense). Initialization follows
// torchvision: convolutions kaiming_normal (fan_out), BatchNorm 1/0, the classifier N(0, 0.01).
#include <cstdint>
#include <memory>

#include "spore/nn/containers.h"

namespace spore::models {

/// Expand (1x1, skipped for expand_ratio 1), depthwise 3x3 (strided), project (1x1, linear);
/// a residual connection when stride is 1 and the channel count is kept.
class InvertedResidual : public nn::UnaryCell {
 public:
  InvertedResidual(int64_t inp, int64_t oup, int64_t stride, int64_t expand_ratio);
  Tensor construct(const Tensor& x) override;

  std::unique_ptr<nn::SequentialCell> conv;

 private:
  bool use_res_connect_;
};

class MobileNetV2 : public nn::UnaryCell {
 public:
  /// width_mult scales every layer's channels (rounded to multiples of 8, as torchvision does).
  MobileNetV2(int64_t num_classes = 1000, double width_mult = 1.0, int64_t in_channels = 3, double dropout = 0.2);
  Tensor construct(const Tensor& x) override;

  std::unique_ptr<nn::SequentialCell> features;
  std::unique_ptr<nn::SequentialCell> classifier;

 private:
  int64_t in_channels_;
};

/// MobileNetV2 for (N, in_channels, H, W) images; 3,504,872 parameters at 1000 classes, width 1.
std::unique_ptr<MobileNetV2> mobilenet_v2(int64_t num_classes = 1000, double width_mult = 1.0, int64_t in_channels = 3);

}  // namespace spore::models
