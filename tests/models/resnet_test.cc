// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <spore/models/resnet.h>
#include <spore/nn/init.h>
#include <spore/spore.h>

#include "error_matchers.h"
#include "models/few_steps.h"

namespace spore::models {
namespace {

// Expected parameter counts from torchvision 0.14 (/usr/bin/python3):
//   sum(p.numel() for p in torchvision.models.resnetNN(num_classes=K).parameters())
constexpr int64_t kResNet18 = 11689512, kResNet34 = 21797672, kResNet50 = 25557032;  // K = 1000
constexpr int64_t kResNet18Classes10 = 11181642;

// Each model is built once (drawing ~60M initial weights is most of these tests' time).
TEST(ResNet, ParameterCountsAndForwardShapes) {
  manual_seed(0);
  Tensor x = ops::normal({2, 3, 32, 32});
  auto r18 = resnet18();
  EXPECT_EQ(r18->num_parameters(), kResNet18);
  EXPECT_EQ((*r18)(x).shape(), (Shape{2, 1000}));
  // torchvision's names: downsample only where the shape changes, BatchNorm buffers included.
  std::vector<std::string> names;
  for (const auto& [n, t] : r18->state_dict()) names.push_back(n);
  for (const char* n : {"conv1.weight", "bn1.running_var", "layer1.0.conv2.weight", "layer2.0.downsample.0.weight",
                        "layer2.0.downsample.1.num_batches_tracked", "layer4.1.bn2.bias", "fc.weight", "fc.bias"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  EXPECT_EQ(std::find(names.begin(), names.end(), "layer1.0.downsample.0.weight"), names.end());
  EXPECT_ERROR((*r18)(ops::normal({2, 1, 32, 32})), "[ResNet] expects (N, 3, H, W) images, got (2, 1, 32, 32)");
  r18.reset();
  auto r34 = resnet34();
  EXPECT_EQ(r34->num_parameters(), kResNet34);
  EXPECT_EQ((*r34)(x).shape(), (Shape{2, 1000}));
  r34.reset();
  auto r50 = resnet50();
  EXPECT_EQ(r50->num_parameters(), kResNet50);
  EXPECT_EQ((*r50)(x).shape(), (Shape{2, 1000}));
  EXPECT_ERROR(ResNet(ResNet::Block::Basic, {2, 0, 2, 2}), "every stage needs at least one block");
}

TEST(ResNet, BasicBlockAlone) {
  manual_seed(0);
  BasicBlock same(8, 8);
  EXPECT_EQ(same.downsample, nullptr);
  Tensor x = ops::normal({2, 8, 6, 6});
  EXPECT_EQ(same(x).shape(), (Shape{2, 8, 6, 6}));
  BasicBlock down(8, 16, 2);
  ASSERT_NE(down.downsample, nullptr);
  EXPECT_EQ(down(x).shape(), (Shape{2, 16, 3, 3}));
  // conv 3x3 8->16, conv 3x3 16->16, shortcut 1x1 8->16, three BatchNorms of 16 (weight + bias).
  EXPECT_EQ(down.num_parameters(), 16 * 8 * 9 + 16 * 16 * 9 + 16 * 8 + 3 * 2 * 16);
  // The identity shortcut is really added: a fresh block in eval mode (running statistics 0 and 1)
  // with its second convolution zeroed returns exactly relu(x).
  BasicBlock fresh(8, 8);
  fresh.eval();
  nn::init::zeros_(fresh.conv2->weight);
  EXPECT_TRUE(ops::all(ops::equal(fresh(x), ops::relu(x))).item<bool>());
  Bottleneck b(16, 4);
  EXPECT_EQ(b(ops::normal({1, 16, 5, 5})).shape(), (Shape{1, 16, 5, 5}));
}

TEST(ResNet, FewStepsLowerTheLoss) {
  manual_seed(1);
  // One input channel: conv1 holds 64 * 1 * 7 * 7 weights instead of torchvision's 64 * 3 * 7 * 7.
  auto net = resnet18(10, 1);
  EXPECT_EQ(net->num_parameters(), kResNet18Classes10 - 64 * 2 * 7 * 7);
  Tensor x = ops::normal({2, 1, 32, 32});
  Tensor y = ops::from_vector<int64_t>({3, 8}, {2});
  // Five steps: after three the loss sat near the bar (1.1-1.5 from 2.8, moving with the
  // rounding of each CPU's kernels: Adam turns near-zero gradients into full steps); after five
  // it is 0.04-0.18 on the AVX-512, AVX2 and baseline kernels.
  auto [first, last] = first_and_last_loss(*net, x, y, 5, 1e-3);
  EXPECT_LT(last, first * 0.5f) << first << " -> " << last;
}

// The deeper two: ResNet-34 (basic blocks) and ResNet-50 (bottlenecks), on small images.
TEST(ResNet, DeeperModelsFewStepsLowerTheLoss) {
  for (int depth : {34, 50}) {
    manual_seed(2);
    auto net = depth == 34 ? resnet34(10, 1) : resnet50(10, 1);
    Tensor x = ops::normal({2, 1, 32, 32});
    Tensor y = ops::from_vector<int64_t>({3, 8}, {2});
    auto [first, last] = first_and_last_loss(*net, x, y, 5, 1e-3);
    EXPECT_LT(last, first * 0.5f) << "resnet" << depth << ": " << first << " -> " << last;
  }
}

}  // namespace
}  // namespace spore::models
