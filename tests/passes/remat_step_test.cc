// SPDX-License-Identifier: Apache-2.0
// Rematerialization on a whole gradient program (four ResNet basic blocks, 1 MiB activations):
// the plan's arena shrinks and every gradient is what the plan without the pass computes.
#include <gtest/gtest.h>

#include <cmath>

#include "passes/lower_plan.h"
#include "passes/pipeline.h"
#include "runtime/plan.h"
#include "spore/models/resnet.h"
#include "spore/spore.h"
#include "trace_program.h"
#include "transforms/interpreter.h"

namespace spore::passes {
namespace {

using namespace ops;

Tensor block(const Tensor& x, const Tensor& w1, const Tensor& g1, const Tensor& b1, const Tensor& w2, const Tensor& g2,
             const Tensor& b2) {
  ConvOptions o;
  o.padding = {1};
  const Tensor a = relu(batch_norm(conv2d(x, w1, {}, o), g1, b1, {}, {}, true));
  return relu(batch_norm(conv2d(a, w2, {}, o), g2, b2, {}, {}, true) + x);
}

std::vector<PassInfo> without(const std::string& name) {
  std::vector<PassInfo> p;
  for (const PassInfo& q : pipeline())
    if (q.name != name) p.push_back(q);
  return p;
}

constexpr int kBlocks = 4;

TEST(RematStep, ResNetBlocksKeepLessAndComputeTheSameGradients) {
  manual_seed(5);
  std::vector<Tensor> in = {normal({16, 64, 16, 16})};
  for (int b = 0; b < kBlocks; ++b)
    for (int c = 0; c < 2; ++c) {
      in.push_back(normal({64, 64, 3, 3}) * 0.05);
      in.push_back(normal({64}) * 0.1 + 1.0);
      in.push_back(normal({64}) * 0.1);
    }
  const auto traced = spore::testing::trace_program(
      [](const std::vector<Tensor>& v) {
        auto loss = [&](const std::vector<Tensor>& p) {
          Tensor h = v[0];
          for (size_t b = 0; b < kBlocks; ++b) h = block(h, p[6 * b], p[6 * b + 1], p[6 * b + 2], p[6 * b + 3], p[6 * b + 4], p[6 * b + 5]);
          return mean(h * h);
        };
        std::vector<Tensor> p(v.begin() + 1, v.end());
        auto [val, g] = value_and_grad([&](const TensorTree& q) { return loss(q.leaves()); })(TensorTree(p));
        std::vector<Tensor> out = {val};
        for (const Tensor& t : g.leaves()) out.push_back(t);
        return out;
      },
      in);
  const auto with = lower_plan(*optimize(traced.graph, 2), traced.inputs);
  const auto plain = lower_plan(*run_passes(traced.graph, without("remat"), 2), traced.inputs);
  std::printf("four basic blocks' gradient: arena %zu bytes with remat, %zu without\n", with->memory.arena_bytes,
              plain->memory.arena_bytes);
  EXPECT_LT(double(with->memory.arena_bytes), 0.9 * double(plain->memory.arena_bytes)) << runtime::plan_str(*with);
  const auto a = runtime::run(*with, traced.inputs), b = runtime::run(*plain, traced.inputs);
  const auto want = transforms::interpret(*traced.graph, traced.inputs);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const auto x = a[i].to(DType::Float64).to_vector<double>(), y = b[i].to(DType::Float64).to_vector<double>(),
               w = want[i].to(DType::Float64).to_vector<double>();
    double scale = 0;
    for (double t : w) scale = std::max(scale, std::abs(t));
    for (size_t j = 0; j < x.size(); ++j) {
      ASSERT_NEAR(x[j], y[j], 1e-5 * scale) << "output " << i << " element " << j;
      ASSERT_NEAR(x[j], w[j], 1e-4 * scale) << "output " << i << " element " << j;
    }
  }
}

}  // namespace
}  // namespace spore::passes

namespace spore::passes {
namespace {

// A whole training step at level 2 (remat, fusion, hoisted updates, SGD momentum in place):
// the same losses and parameters as PyNative after three steps.
TEST(RematStep, TrainingStepAtLevelTwoMatchesPyNative) {
  auto run = [](Mode mode, std::vector<float>& losses) {
    manual_seed(6);
    auto net = std::make_unique<nn::SequentialCell>();
    for (int b = 0; b < 4; ++b) net->add(std::make_unique<models::BasicBlock>(64, 64));
    net->add(std::make_unique<nn::AdaptiveAvgPool2d>(1));
    net->add(std::make_unique<nn::Flatten>());
    net->add(std::make_unique<nn::Dense>(64, 10));
    set_context(mode);
    optim::SGD opt(net->parameters(), {.lr = 0.05, .momentum = 0.9});
    train::Model model(*net, [](const Tensor& o, const Tensor& y) { return cross_entropy(o, y); }, opt);
    manual_seed(7);
    const Tensor x = normal({16, 64, 16, 16}), y = randint(0, 10, {16});
    for (int s = 0; s < 3; ++s) losses.push_back(model.train_step(x, y).first.item<float>());
    set_context(Mode::PyNative);
    std::vector<float> params;
    for (const Tensor& p : net->parameters())
      for (float v : p.to_vector<float>()) params.push_back(v);
    return params;
  };
  std::vector<float> eager_losses, graph_losses;
  const auto eager = run(Mode::PyNative, eager_losses);
  ::setenv("SPORE_OPT_LEVEL", "2", 1);
  const auto graph = run(Mode::Graph, graph_losses);
  ::unsetenv("SPORE_OPT_LEVEL");
  for (size_t i = 0; i < eager_losses.size(); ++i)
    EXPECT_NEAR(graph_losses[i], eager_losses[i], 1e-4 * std::abs(eager_losses[i])) << "step " << i;
  ASSERT_EQ(graph.size(), eager.size());
  for (size_t i = 0; i < graph.size(); ++i) ASSERT_NEAR(graph[i], eager[i], 1e-4 * (1 + std::abs(eager[i]))) << i;
}

}  // namespace
}  // namespace spore::passes
