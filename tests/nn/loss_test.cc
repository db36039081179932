// SPDX-License-Identifier: Apache-2.0
// Loss cells wrap the loss functions; values at extremes stay finite; bad arguments are named.
// (Values and gradients against PyTorch: tests/oracle/cases_nn_layers.cc.)
#include <gtest/gtest.h>

#include <cmath>

#include "error_matchers.h"
#include "nn/nn_test_util.h"

namespace spore::nn {
namespace {

TEST(Loss, CellsMatchFunctions) {
  const Tensor x = ops::tensor({{0.5f, -1.f, 2.f}, {1.f, 0.f, -3.f}}), y = ops::tensor({{1.f, 0.f, 2.f}, {0.f, 0.f, 1.f}});
  EXPECT_FLOAT_EQ(MSELoss()(x, y).item<float>(), mse_loss(x, y).item<float>());
  EXPECT_FLOAT_EQ(MSELoss()(x, y).item<float>(), (0.25f + 1 + 0 + 1 + 0 + 16) / 6);
  EXPECT_FLOAT_EQ(L1Loss(Reduction::Sum)(x, y).item<float>(), 0.5f + 1 + 0 + 1 + 0 + 4);
  EXPECT_EQ(SmoothL1Loss(Reduction::None, 1.0)(x, y).shape(), (Shape{2, 3}));
  EXPECT_FLOAT_EQ(HuberLoss(Reduction::Sum, 2.0)(x, y).item<float>(), 0.125f + 0.5f + 0 + 0.5f + 0 + 2 * (4 - 1));
  const Tensor idx = ops::tensor({2, 0});
  CrossEntropyLoss ce({.weight = ops::tensor({1.f, 2.f, 3.f}), .label_smoothing = 0.1});
  EXPECT_FLOAT_EQ(ce(x, idx).item<float>(), cross_entropy(x, idx, ops::tensor({1.f, 2.f, 3.f}), -100, Reduction::Mean, 0.1).item<float>());
  EXPECT_EQ(ce.named_buffers().size(), 1u);
  EXPECT_FLOAT_EQ(NLLLoss()(ops::log_softmax(x, 1), idx).item<float>(), cross_entropy(x, idx).item<float>());
  EXPECT_FLOAT_EQ(BCEWithLogitsLoss()(x, y).item<float>(),
                  BCELoss()(ops::sigmoid(x), y).item<float>());
  EXPECT_NEAR(KLDivLoss(Reduction::BatchMean)(ops::log_softmax(x, 1), ops::softmax(y, 1)).item<float>(),
              kl_div(ops::log_softmax(x, 1), ops::softmax(y, 1), Reduction::Sum).item<float>() / 2, 1e-6);
}

TEST(Loss, StableAtExtremes) {
  const Tensor z = ops::tensor({-1000.f, -50.f, 0.f, 50.f, 1000.f}), t = ops::tensor({1.f, 0.f, 1.f, 1.f, 0.f});
  const auto l = binary_cross_entropy_with_logits(z, t, {}, {}, Reduction::None).to_vector<float>();
  EXPECT_FLOAT_EQ(l[0], 1000.f);
  EXPECT_FLOAT_EQ(l[4], 1000.f);
  EXPECT_NEAR(l[2], std::log(2.0), 1e-6);
  EXPECT_NEAR(l[1], 0.f, 1e-6);
  const Tensor g = grad([&](const Tensor& a) { return binary_cross_entropy_with_logits(a, t, {}, {}, Reduction::Sum); })(z);
  for (float v : g.to_vector<float>()) EXPECT_TRUE(std::isfinite(v));
  // BCE on probabilities that are exactly 0 and 1: logs clamp at -100, as PyTorch.
  const auto b = binary_cross_entropy(ops::tensor({0.f, 1.f}), ops::tensor({1.f, 0.f}), {}, Reduction::None).to_vector<float>();
  EXPECT_FLOAT_EQ(b[0], 100.f);
  EXPECT_FLOAT_EQ(b[1], 100.f);
  // Cross-entropy of huge logits is finite.
  EXPECT_TRUE(std::isfinite(cross_entropy(ops::tensor({{1e4f, -1e4f}}), ops::tensor({1})).item<float>()));
  // KL with zero target probabilities: 0 * log 0 = 0, and the gradient is finite.
  const Tensor tp = ops::tensor({0.f, 1.f});
  const Tensor gk = grad([&](const Tensor& a) { return kl_div(a, tp, Reduction::Sum); })(ops::tensor({-1.f, -0.5f}));
  EXPECT_EQ(gk.to_vector<float>(), (std::vector<float>{0.f, -1.f}));
}

TEST(Loss, ClearErrors) {
  EXPECT_ERROR(mse_loss(ops::zeros({2, 3}), ops::zeros({3, 2})), "[mse_loss] input has shape (2, 3) but target has shape (3, 2)");
  EXPECT_ERROR(MSELoss(Reduction::BatchMean), "BatchMean is for KLDivLoss only");
  EXPECT_ERROR(cross_entropy(ops::zeros({2, 3}), ops::tensor({0, 1}), {}, -100, Reduction::BatchMean), "kl_div only");
  EXPECT_ERROR(huber_loss(ops::zeros({2}), ops::zeros({2}), Reduction::Mean, 0.0), "delta must be > 0");
}

}  // namespace
}  // namespace spore::nn

namespace spore::nn {
namespace {

// At p = 0 or 1 the loss is PyTorch's clamped -100 per term and the gradient stays finite.
TEST(NnLossEdges, BceAtZeroAndOneHasFiniteGradients) {
  Tensor p = ops::from_vector<float>({0.0f, 1.0f, 0.5f, 1.0f});
  Tensor y = ops::from_vector<float>({1.0f, 0.0f, 1.0f, 1.0f});
  Tensor loss = binary_cross_entropy(p, y, {}, Reduction::Sum);
  EXPECT_NEAR(loss.item<float>(), 100.0f + 100.0f + std::log(2.0f) + 0.0f, 1e-4);
  Tensor g = grad([&](const Tensor& q) { return binary_cross_entropy(q, y, {}, Reduction::Sum); })(p);
  for (float v : g.to_vector<float>()) EXPECT_TRUE(std::isfinite(v)) << v;
  EXPECT_NEAR(g.to_vector<float>()[2], -2.0f, 1e-5);  // d/dp -log(p) at 0.5
}

}  // namespace
}  // namespace spore::nn
