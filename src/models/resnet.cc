// SPDX-License-Identifier: Apache-2.0
#include "spore/models/resnet.h"

#include "spore/error.h"
#include "spore/nn/init.h"
#include "spore/ops.h"

namespace spore::models {
namespace {

// A convolution without bias (BatchNorm follows each), initialized as torchvision does. The
// kaiming draw lives in reset_own, so reset_parameters() repeats it in the constructor's order.
class KaimingConv2d : public nn::Conv2d {
 public:
  KaimingConv2d(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding)
      : nn::Conv2d(in, out, kernel, stride, padding, /*dilation=*/1, /*groups=*/1, /*bias=*/false) {
    kaiming();
  }
  void reset_own() override {
    nn::Conv2d::reset_own();
    kaiming();
  }

 private:
  void kaiming() { nn::init::kaiming_normal_(weight, 0.0, nn::init::FanMode::FanOut, nn::init::Nonlinearity::ReLU); }
};

std::unique_ptr<nn::Conv2d> conv(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1, int64_t padding = 0) {
  return std::make_unique<KaimingConv2d>(in, out, kernel, stride, padding);
}

// torchvision's shortcut when the block changes shape: 1x1 strided conv + BatchNorm ("downsample.0/.1").
std::unique_ptr<nn::SequentialCell> shortcut(int64_t in, int64_t out, int64_t stride) {
  if (stride == 1 && in == out) return nullptr;
  return std::make_unique<nn::SequentialCell>(conv(in, out, 1, stride), std::make_unique<nn::BatchNorm2d>(out));
}

void check_block(const char* name, int64_t inplanes, int64_t planes, int64_t stride) {
  SPORE_CHECK(inplanes > 0 && planes > 0 && stride > 0, "[", name,
              "] inplanes, planes and stride must be positive, got ", inplanes, ", ", planes, ", ", stride);
}

}  // namespace

BasicBlock::BasicBlock(int64_t inplanes, int64_t planes, int64_t stride) : nn::UnaryCell("BasicBlock") {
  check_block("BasicBlock", inplanes, planes, stride);
  conv1 = conv(inplanes, planes, 3, stride, 1);
  bn1 = std::make_unique<nn::BatchNorm2d>(planes);
  conv2 = conv(planes, planes, 3, 1, 1);
  bn2 = std::make_unique<nn::BatchNorm2d>(planes);
  downsample = shortcut(inplanes, planes * kExpansion, stride);
  register_cell("conv1", conv1.get());
  register_cell("bn1", bn1.get());
  register_cell("conv2", conv2.get());
  register_cell("bn2", bn2.get());
  if (downsample) register_cell("downsample", downsample.get());
}

Tensor BasicBlock::construct(const Tensor& x) {
  Tensor out = ops::relu((*bn1)((*conv1)(x)));
  out = (*bn2)((*conv2)(out));
  return ops::relu(out + (downsample ? (*downsample)(x) : x));
}

Bottleneck::Bottleneck(int64_t inplanes, int64_t planes, int64_t stride) : nn::UnaryCell("Bottleneck") {
  check_block("Bottleneck", inplanes, planes, stride);
  conv1 = conv(inplanes, planes, 1);
  bn1 = std::make_unique<nn::BatchNorm2d>(planes);
  conv2 = conv(planes, planes, 3, stride, 1);
  bn2 = std::make_unique<nn::BatchNorm2d>(planes);
  conv3 = conv(planes, planes * kExpansion, 1);
  bn3 = std::make_unique<nn::BatchNorm2d>(planes * kExpansion);
  downsample = shortcut(inplanes, planes * kExpansion, stride);
  register_cell("conv1", conv1.get());
  register_cell("bn1", bn1.get());
  register_cell("conv2", conv2.get());
  register_cell("bn2", bn2.get());
  register_cell("conv3", conv3.get());
  register_cell("bn3", bn3.get());
  if (downsample) register_cell("downsample", downsample.get());
}

Tensor Bottleneck::construct(const Tensor& x) {
  Tensor out = ops::relu((*bn1)((*conv1)(x)));
  out = ops::relu((*bn2)((*conv2)(out)));
  out = (*bn3)((*conv3)(out));
  return ops::relu(out + (downsample ? (*downsample)(x) : x));
}

ResNet::ResNet(Block block, std::array<int64_t, 4> layers, int64_t num_classes, int64_t in_channels)
    : nn::UnaryCell("ResNet") {
  SPORE_CHECK(num_classes >= 1 && in_channels >= 1, "[ResNet] num_classes and in_channels must be positive, got ",
              num_classes, " and ", in_channels);
  for (int64_t n : layers) SPORE_CHECK(n >= 1, "[ResNet] every stage needs at least one block, got ", n);
  const int64_t expansion = block == Block::Basic ? BasicBlock::kExpansion : Bottleneck::kExpansion;
  conv1 = conv(in_channels, 64, 7, 2, 3);
  bn1 = std::make_unique<nn::BatchNorm2d>(64);
  relu = std::make_unique<nn::ReLU>();
  maxpool = std::make_unique<nn::MaxPool2d>(3, 2, 1);
  int64_t inplanes = 64;
  auto stage = [&](int64_t planes, int64_t blocks, int64_t stride) {
    auto s = std::make_unique<nn::SequentialCell>();
    for (int64_t i = 0; i < blocks; ++i) {
      const int64_t st = i == 0 ? stride : 1;
      if (block == Block::Basic) {
        s->add(std::make_unique<BasicBlock>(inplanes, planes, st));
      } else {
        s->add(std::make_unique<Bottleneck>(inplanes, planes, st));
      }
      inplanes = planes * expansion;
    }
    return s;
  };
  layer1 = stage(64, layers[0], 1);
  layer2 = stage(128, layers[1], 2);
  layer3 = stage(256, layers[2], 2);
  layer4 = stage(512, layers[3], 2);
  avgpool = std::make_unique<nn::AdaptiveAvgPool2d>(1);
  fc = std::make_unique<nn::Dense>(512 * expansion, num_classes);
  register_cell("conv1", conv1.get());
  register_cell("bn1", bn1.get());
  register_cell("relu", relu.get());
  register_cell("maxpool", maxpool.get());
  register_cell("layer1", layer1.get());
  register_cell("layer2", layer2.get());
  register_cell("layer3", layer3.get());
  register_cell("layer4", layer4.get());
  register_cell("avgpool", avgpool.get());
  register_cell("fc", fc.get());
}

Tensor ResNet::construct(const Tensor& x) {
  SPORE_CHECK(x.dim() == 4 && x.shape()[1] == conv1->weight.shape()[1], "[ResNet] expects (N, ",
              conv1->weight.shape()[1], ", H, W) images, got ", shape_str(x.shape()),
              "; build the model with in_channels matching the data");
  Tensor h = (*maxpool)((*relu)((*bn1)((*conv1)(x))));
  h = (*layer4)((*layer3)((*layer2)((*layer1)(h))));
  return (*fc)(ops::flatten((*avgpool)(h), 1));
}

std::unique_ptr<ResNet> resnet18(int64_t num_classes, int64_t in_channels) {
  return std::make_unique<ResNet>(ResNet::Block::Basic, std::array<int64_t, 4>{2, 2, 2, 2}, num_classes, in_channels);
}

std::unique_ptr<ResNet> resnet34(int64_t num_classes, int64_t in_channels) {
  return std::make_unique<ResNet>(ResNet::Block::Basic, std::array<int64_t, 4>{3, 4, 6, 3}, num_classes, in_channels);
}

std::unique_ptr<ResNet> resnet50(int64_t num_classes, int64_t in_channels) {
  return std::make_unique<ResNet>(ResNet::Block::Bottleneck, std::array<int64_t, 4>{3, 4, 6, 3}, num_classes,
                                  in_channels);
}

}  // namespace spore::models
