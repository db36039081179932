// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <spore/models/classic.h>
#include <spore/optim/optim.h>
#include <spore/spore.h>
#include <spore/train/model.h>

#include "error_matchers.h"

namespace spore::models {
namespace {

TEST(Models, ForwardShapesAndParameterCounts) {
  manual_seed(0);
  Tensor x = ops::normal({4, 1, 28, 28});
  auto m = mlp({784, 512, 256, 10});
  EXPECT_EQ((*m)(x).shape(), (Shape{4, 10}));
  EXPECT_EQ(m->num_parameters(), 784 * 512 + 512 + 512 * 256 + 256 + 256 * 10 + 10);
  auto l = lenet5();
  EXPECT_EQ((*l)(x).shape(), (Shape{4, 10}));
  // conv1 6*1*25+6, conv2 16*6*25+16, dense 400*120+120, 120*84+84, 84*10+10
  EXPECT_EQ(l->num_parameters(), 156 + 2416 + 48120 + 10164 + 850);
  EXPECT_EQ(create("lenet", 3, 3)->operator()(ops::normal({2, 3, 28, 28})).shape(), (Shape{2, 3}));
  EXPECT_ERROR(create("vgg"),
               "unknown model 'vgg'; known: mlp, lenet, resnet18, resnet34, resnet50, mobilenet_v2, vit_tiny");
  // The image models by name, on 32x32 images.
  for (const std::string name : {"resnet18", "mobilenet_v2", "vit_tiny"})
    EXPECT_EQ(create(name, 5, 3, 32)->operator()(ops::normal({2, 3, 32, 32})).shape(), (Shape{2, 5})) << name;
  EXPECT_EQ(create("mlp", 4, 1, 8)->operator()(ops::normal({2, 1, 8, 8})).shape(), (Shape{2, 4}));
  EXPECT_ERROR(create("lenet", 10, 1, 32), "lenet takes 28x28 images, got image_size 32");
  EXPECT_ERROR(mlp({784}), "at least an input and an output size");
}

// A few steps on a fixed batch lower the loss, for each model.
TEST(Models, FewStepsLowerTheLoss) {
  for (const std::string name : {"mlp", "lenet"}) {
    manual_seed(1);
    auto net = create(name);
    Tensor x = ops::normal({32, 1, 28, 28});
    Tensor y = ops::randint(0, 10, {32});
    optim::Adam opt(net->parameters(), {.lr = 2e-3});
    train::Model model(
        *net, [](const Tensor& o, const Tensor& t) { return ops::cross_entropy(o, t); }, opt);
    const float first = model.train_step(x, y).first.item<float>();
    float last = first;
    for (int i = 0; i < 15; ++i) last = model.train_step(x, y).first.item<float>();
    EXPECT_LT(last, first * 0.8f) << name;
  }
}

}  // namespace
}  // namespace spore::models
