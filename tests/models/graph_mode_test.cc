// SPDX-License-Identifier: Apache-2.0
// Zoo models train the same compiled (Graph mode: one jit-compiled train step) as eagerly.
#include <gtest/gtest.h>
#include <spore/models/resnet.h>
#include <spore/models/text.h>
#include <spore/nn/activation.h>
#include <spore/nn/dense.h>
#include <spore/nn/pooling.h>
#include <spore/spore.h>

#include <functional>
#include <memory>

#include "models/few_steps.h"

namespace spore::models {
namespace {

// Losses of `steps` Adam steps from the same seed, in one mode.
std::vector<float> losses(const std::function<std::unique_ptr<nn::UnaryCell>()>& make, const Tensor& x, const Tensor& y,
                          train::LossFn loss, Mode mode, int steps) {
  manual_seed(11);
  auto net = make();
  ModeGuard guard(mode);
  optim::Adam opt(net->parameters(), {.lr = 3e-3});
  train::Model model(*net, std::move(loss), opt);
  std::vector<float> out;
  for (int i = 0; i < steps; ++i) out.push_back(model.train_step(x, y).first.item<float>());
  EXPECT_EQ(model.train_traces(), mode == Mode::Graph ? 1 : 0);
  return out;
}

void expect_same_losses(const std::function<std::unique_ptr<nn::UnaryCell>()>& make, const Tensor& x, const Tensor& y,
                        train::LossFn loss) {
  const auto eager = losses(make, x, y, loss, Mode::PyNative, 4);
  const auto graph = losses(make, x, y, loss, Mode::Graph, 4);
  for (size_t i = 0; i < eager.size(); ++i) EXPECT_NEAR(graph[i], eager[i], 1e-4 * std::abs(eager[i]) + 1e-5) << i;
  EXPECT_LT(graph.back(), graph.front());
}

TEST(ZooGraphMode, ResNetBlocksTrainAsEagerly) {
  manual_seed(10);
  Tensor x = ops::normal({4, 3, 8, 8});
  Tensor y = ops::from_vector<int64_t>({0, 1, 2, 1}, {4});
  expect_same_losses(
      [] {
        return std::make_unique<nn::SequentialCell>(
            std::make_unique<BasicBlock>(3, 8), std::make_unique<BasicBlock>(8, 16, 2),
            std::make_unique<Bottleneck>(16, 4), std::make_unique<nn::AdaptiveAvgPool2d>(1),
            std::make_unique<nn::Flatten>(), std::make_unique<nn::Dense>(16, 3));
      },
      x, y, cross_entropy_loss);
}

TEST(ZooGraphMode, GptTrainsAsEagerly) {
  manual_seed(12);
  Tensor seq = ops::randint(0, 16, {2, 7});
  Tensor x = ops::slice(seq, 1, 0, 6).contiguous(), y = ops::slice(seq, 1, 1, 7).contiguous();
  expect_same_losses([] { return gpt({.vocab_size = 16, .block_size = 8, .n_layer = 2, .n_head = 2, .n_embd = 16}); },
                     x, y,
                     [](const Tensor& logits, const Tensor& t) {
                       return ops::cross_entropy(ops::flatten(logits, 0, 1), ops::flatten(t));
                     });
}

}  // namespace
}  // namespace spore::models
