// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <spore/models/mobilenet.h>
#include <spore/spore.h>

#include "error_matchers.h"
#include "models/few_steps.h"

namespace spore::models {
namespace {

// Expected counts from torchvision 0.14 (/usr/bin/python3):
//   sum(p.numel() for p in torchvision.models.mobilenet_v2(num_classes=K, width_mult=W).parameters())
TEST(MobileNetV2, ParameterCountsMatchTorchvision) {
  EXPECT_EQ(mobilenet_v2()->num_parameters(), 3504872);        // K = 1000, W = 1.0
  EXPECT_EQ(mobilenet_v2(10)->num_parameters(), 2236682);      // K = 10, W = 1.0
  EXPECT_EQ(mobilenet_v2(10, 0.5)->num_parameters(), 700490);  // K = 10, W = 0.5
}

TEST(MobileNetV2, ForwardShapesAndNames) {
  manual_seed(0);
  auto net = mobilenet_v2(10, 0.5);
  EXPECT_EQ((*net)(ops::normal({2, 3, 32, 32})).shape(), (Shape{2, 10}));
  EXPECT_EQ(net->features->size(), 19u);
  std::vector<std::string> names;
  for (const auto& [n, t] : net->state_dict()) names.push_back(n);
  for (const char* n : {"features.0.0.weight", "features.0.1.running_mean", "features.1.conv.0.0.weight",
                        "features.1.conv.1.weight", "features.2.conv.0.0.weight", "features.2.conv.3.bias",
                        "features.18.1.weight", "classifier.1.weight", "classifier.1.bias"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  EXPECT_ERROR((*net)(ops::normal({2, 1, 32, 32})), "[MobileNetV2] expects (N, 3, H, W) images");
  EXPECT_ERROR(mobilenet_v2(10, 0.0), "width_mult must be positive");
}

TEST(MobileNetV2, FewStepsLowerTheLoss) {
  manual_seed(2);
  auto net = mobilenet_v2(10, 0.5);
  Tensor x = ops::normal({4, 3, 32, 32});
  Tensor y = ops::from_vector<int64_t>({0, 7, 2, 9}, {4});
  auto [first, last] = first_and_last_loss(*net, x, y, 6, 3e-3);
  EXPECT_LT(last, first * 0.7f);
}

}  // namespace
}  // namespace spore::models
