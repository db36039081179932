// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <spore/models/vit.h>
#include <spore/spore.h>

#include "error_matchers.h"
#include "models/few_steps.h"

namespace spore::models {
namespace {

// Expected counts from torchvision 0.14 (/usr/bin/python3): sum(p.numel() for p in
// torchvision.models.VisionTransformer(image_size, patch_size, num_layers, num_heads, hidden_dim,
// mlp_dim, num_classes=10).parameters()); its encoder blocks hold the same parameters as
// nn.TransformerEncoderLayer.
TEST(ViT, ParameterCountsMatchTorchvision) {
  EXPECT_EQ(vit_tiny()->num_parameters(), 5362762);  // (32, 4, 12, 3, 192, 768)
  EXPECT_EQ(vit({.image_size = 16, .dim = 32, .depth = 2, .heads = 2, .mlp_dim = 64})->num_parameters(),
            19626);  // (16, 4, 2, 2, 32, 64)
}

TEST(ViT, ForwardShapes) {
  manual_seed(0);
  auto tiny = vit_tiny();
  EXPECT_EQ((*tiny)(ops::normal({2, 3, 32, 32})).shape(), (Shape{2, 10}));
  auto mnist =
      vit({.image_size = 28, .patch_size = 7, .in_channels = 1, .dim = 16, .depth = 1, .heads = 2, .mlp_dim = 32});
  EXPECT_EQ(mnist->pos_embedding.shape(), (Shape{1, 17, 16}));
  EXPECT_EQ((*mnist)(ops::normal({3, 1, 28, 28})).shape(), (Shape{3, 10}));
  EXPECT_ERROR((*mnist)(ops::normal({3, 1, 32, 32})), "[VisionTransformer] expects (N, 1, 28, 28) images");
  EXPECT_ERROR(vit({.image_size = 30}), "image_size 30 must be a positive multiple of patch_size 4");
  EXPECT_ERROR(vit({.dim = 10, .heads = 3}), "dim 10 must be a positive multiple of heads 3");
}

TEST(ViT, FewStepsLowerTheLoss) {
  manual_seed(3);
  auto net = vit({.image_size = 16, .dim = 32, .depth = 2, .heads = 2, .mlp_dim = 64});
  Tensor x = ops::normal({8, 3, 16, 16});
  Tensor y = ops::from_vector<int64_t>({0, 1, 2, 3, 4, 5, 6, 7}, {8});
  auto [first, last] = first_and_last_loss(*net, x, y, 15, 3e-3);
  EXPECT_LT(last, first * 0.7f);
}

}  // namespace
}  // namespace spore::models
