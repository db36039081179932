// SPDX-License-Identifier: Apache-2.0
#pragma once
// ResNet-18/34/50 with torchvision's layout and parameter names (conv1, bn1, layer1..4, fc;
// blocks conv1/bn1/conv2/bn2[/conv3/bn3] and downsample.0/.1), so a torchvision state_dict loads
// with load_state_dict as it is. Initialization follows torchvision: convolutions kaiming_normal
// (fan_out, relu), BatchNorm weight 1 and bias 0, fc PyTorch's Linear default.
#include <array>
#include <cstdint>
#include <memory>

#include "spore/nn/activation.h"
#include "spore/nn/containers.h"
#include "spore/nn/conv.h"
#include "spore/nn/dense.h"
#include "spore/nn/normalization.h"
#include "spore/nn/pooling.h"

namespace spore::models {

/// Two 3x3 convolutions with a residual connection (ResNet-18/34). The shortcut is a 1x1 strided
/// convolution + BatchNorm (`downsample`) when the shape changes, the identity otherwise.
/// Usable alone: `BasicBlock block(64, 128, /*stride=*/2);` maps (N, 64, H, W) to (N, 128, H/2, W/2).
class BasicBlock : public nn::UnaryCell {
 public:
  static constexpr int64_t kExpansion = 1;
  BasicBlock(int64_t inplanes, int64_t planes, int64_t stride = 1);
  Tensor construct(const Tensor& x) override;

  std::unique_ptr<nn::Conv2d> conv1, conv2;
  std::unique_ptr<nn::BatchNorm2d> bn1, bn2;
  std::unique_ptr<nn::SequentialCell> downsample;  // null for the identity shortcut
};

/// 1x1 reduce, 3x3 (strided, as torchvision's "ResNet v1.5"), 1x1 expand by 4, with a residual
/// connection (ResNet-50). Output channels are planes * 4.
class Bottleneck : public nn::UnaryCell {
 public:
  static constexpr int64_t kExpansion = 4;
  Bottleneck(int64_t inplanes, int64_t planes, int64_t stride = 1);
  Tensor construct(const Tensor& x) override;

  std::unique_ptr<nn::Conv2d> conv1, conv2, conv3;
  std::unique_ptr<nn::BatchNorm2d> bn1, bn2, bn3;
  std::unique_ptr<nn::SequentialCell> downsample;  // null for the identity shortcut
};

/// The ResNet body: 7x7/2 stem, 3x3/2 max pool, four stages of blocks, global average pool, fc.
/// Takes (N, in_channels, H, W) with H, W >= 32 (the stem and stages downsample by 32).
class ResNet : public nn::UnaryCell {
 public:
  enum class Block { Basic, Bottleneck };
  ResNet(Block block, std::array<int64_t, 4> layers, int64_t num_classes = 1000, int64_t in_channels = 3);
  Tensor construct(const Tensor& x) override;

  std::unique_ptr<nn::Conv2d> conv1;
  std::unique_ptr<nn::BatchNorm2d> bn1;
  std::unique_ptr<nn::ReLU> relu;
  std::unique_ptr<nn::MaxPool2d> maxpool;
  std::unique_ptr<nn::SequentialCell> layer1, layer2, layer3, layer4;
  std::unique_ptr<nn::AdaptiveAvgPool2d> avgpool;
  std::unique_ptr<nn::Dense> fc;
};

/// ResNet-18: BasicBlock x (2, 2, 2, 2); 11,689,512 parameters for 1000 classes.
std::unique_ptr<ResNet> resnet18(int64_t num_classes = 1000, int64_t in_channels = 3);
/// ResNet-34: BasicBlock x (3, 4, 6, 3).
std::unique_ptr<ResNet> resnet34(int64_t num_classes = 1000, int64_t in_channels = 3);
/// ResNet-50: Bottleneck x (3, 4, 6, 3).
std::unique_ptr<ResNet> resnet50(int64_t num_classes = 1000, int64_t in_channels = 3);

}  // namespace spore::models
