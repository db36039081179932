// SPDX-License-Identifier: Apache-2.0
// The optimizer step under jit: traced once, it equals the eager step; the learning rate and the
// step count are graph inputs, so set_lr and schedules take effect without a retrace, and the
// parameters and state are updated in place by the compiled step.
#include <gtest/gtest.h>

#include <cmath>

#include "optim_fixtures.h"
#include "spore/spore.h"

namespace spore::optim {
namespace {

void expect_close(const std::vector<Tensor>& a, const std::vector<Tensor>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const auto x = a[i].to_vector<double>(), y = b[i].to_vector<double>();
    ASSERT_EQ(x.size(), y.size());
    for (size_t k = 0; k < x.size(); ++k)
      ASSERT_NEAR(x[k], y[k], 2e-6 * (1 + std::abs(y[k]))) << what << " tensor " << i << " element " << k;
  }
}

std::vector<Tensor> state_values(const Optimizer& o) {
  std::vector<Tensor> out;
  for (const auto& [k, t] : o.state_dict()) out.push_back(t);
  return out;
}

// Runs 8 steps eagerly and compiled, changing the learning rate before step 4.
void check_jit_matches_eager(const std::string& name, const MakeOptimizer& make) {
  SCOPED_TRACE(name);
  const auto grads = grad_sequence(8, 77);
  auto pe = param_set(9), pj = param_set(9);
  auto eager = make(two_groups(pe));
  auto compiled = make(two_groups(pj));
  auto step = jit([&](const TensorTree& g) {
    compiled->step(g);
    return TensorTree();
  });
  for (int s = 0; s < 8; ++s) {
    if (s == 4) {
      eager->set_lr(eager->lr(0) * 0.1, 0);
      compiled->set_lr(compiled->lr(0) * 0.1, 0);
    }
    eager->step(grads[s]);
    step(TensorTree(grads[s]));
    expect_close(pj, pe, "parameters after step " + std::to_string(s));
  }
  expect_close(state_values(*compiled), state_values(*eager), "state");
  EXPECT_EQ(step.core().traces(), 1);
  // The parameters are written in place (the model's tensors), not replaced.
  const auto ps = compiled->params();
  for (size_t i = 0; i < pj.size(); ++i) EXPECT_TRUE(ps[i].is_same(pj[i]));
  const std::string text = step.core().last_graph_text();
  EXPECT_NE(text.find("updates"), std::string::npos) << text;
}

TEST(OptimJit, SGDTracedOnceMatchesEagerAcrossLrChange) { check_jit_matches_eager("SGD", optimizer_kinds()[0].second); }

TEST(OptimJit, AdamTracedOnceMatchesEagerAcrossLrChange) {
  check_jit_matches_eager("Adam", optimizer_kinds()[1].second);
}

TEST(OptimJit, EveryOptimizerTracedMatchesEager) {
  for (const auto& [name, make] : optimizer_kinds()) check_jit_matches_eager(name, make);
}

// The lr really is read from the tensor: a compiled step with lr 0 leaves the parameters alone.
TEST(OptimJit, LrTensorIsAGraphInputNotAConstant) {
  auto ps = param_set(3);
  const std::vector<Tensor> before = {ps[0].clone(), ps[1].clone(), ps[2].clone()};
  SGD opt(ps, {.lr = 0.1});
  auto step = jit([&](const TensorTree& g) {
    opt.step(g);
    return TensorTree();
  });
  const auto g = grad_sequence(2, 5);
  opt.set_lr(0.0);
  step(TensorTree(g[0]));
  for (size_t i = 0; i < ps.size(); ++i) EXPECT_EQ(ps[i].to_vector<float>(), before[i].to_vector<float>());
  opt.set_lr(0.5);
  step(TensorTree(g[1]));
  const auto p0 = ps[0].to_vector<float>(), b0 = before[0].to_vector<float>(), g0 = g[1][0].to_vector<float>();
  for (size_t k = 0; k < p0.size(); ++k) EXPECT_NEAR(p0[k], b0[k] - 0.5f * g0[k], 1e-6);
  EXPECT_EQ(step.core().traces(), 1);
}

// A schedule driving a compiled step: each epoch's rate reaches the graph, with one trace.
TEST(OptimJit, ScheduleDrivesCompiledStepWithoutRetrace) {
  const auto grads = grad_sequence(6, 12);
  auto pe = param_set(4), pj = param_set(4);
  SGD eager(pe, {.lr = 0.2, .momentum = 0.5});
  SGD compiled(pj, {.lr = 0.2, .momentum = 0.5});
  StepLR se(eager, 2, 0.5), sj(compiled, 2, 0.5);
  auto step = jit([&](const TensorTree& g) {
    compiled.step(g);
    return TensorTree();
  });
  for (int s = 0; s < 6; ++s) {
    eager.step(grads[s]);
    step(TensorTree(grads[s]));
    se.step();
    sj.step();
  }
  EXPECT_EQ(compiled.lr(), 0.2 * 0.125);
  expect_close(pj, pe, "parameters");
  EXPECT_EQ(step.core().traces(), 1);
}

// OneCycleLR cycles SGD's momentum and Adam's beta1: the values reach the compiled step as
// tensors (a frozen momentum would drift from the eager run), with one trace.
TEST(OptimJit, OneCycleMomentumDrivesCompiledStepWithoutRetrace) {
  const auto grads = grad_sequence(6, 31);
  for (const bool adam : {false, true}) {
    SCOPED_TRACE(adam ? "Adam" : "SGD");
    auto pe = param_set(7), pj = param_set(7);
    auto make = [&](std::vector<Tensor>& ps) -> std::unique_ptr<Optimizer> {
      if (adam) return std::make_unique<Adam>(ps, AdamOptions{.lr = 0.05});
      return std::make_unique<SGD>(ps, SGDOptions{.lr = 0.2, .momentum = 0.9});
    };
    auto eager = make(pe), compiled = make(pj);
    OneCycleLR se(*eager, {0.2}, 6, {.pct_start = 0.5}), sj(*compiled, {0.2}, 6, {.pct_start = 0.5});
    const std::string m = adam ? "beta1" : "momentum";
    EXPECT_EQ(sj.momentum_option(), m);
    auto step = jit([&](const TensorTree& g) {
      compiled->step(g);
      return TensorTree();
    });
    std::vector<double> seen;
    for (int s = 0; s < 6; ++s) {
      seen.push_back(compiled->option(m));
      eager->step(grads[s]);
      step(TensorTree(grads[s]));
      se.step();
      sj.step();
      expect_close(pj, pe, "parameters after step " + std::to_string(s));
    }
    EXPECT_DOUBLE_EQ(seen[0], 0.95);
    EXPECT_NEAR(seen[2], 0.85, 1e-12);  // the rate's peak: pct_start * 6 - 1
    EXPECT_EQ(step.core().traces(), 1);
  }
}

// Clipping inside the compiled step: the gradients are intermediates of the graph.
TEST(OptimJit, ClipAndStepCompiledMatchesEager) {
  const auto grads = grad_sequence(3, 21);
  auto pe = param_set(6), pj = param_set(6);
  Adam eager(pe, {.lr = 0.05});
  Adam compiled(pj, {.lr = 0.05});
  auto step = jit([&](const TensorTree& g) {
    std::vector<Tensor> gs;
    for (const Tensor& t : g.leaves()) gs.push_back(t * 3.0);
    const Tensor norm = clip_grad_norm_(gs, 1.0);
    compiled.step(gs);
    return norm;
  });
  for (int s = 0; s < 3; ++s) {
    std::vector<Tensor> gs;
    for (const Tensor& t : grads[s]) gs.push_back(t * 3.0);
    const Tensor ne = clip_grad_norm_(gs, 1.0);
    eager.step(gs);
    const Tensor nj = step(TensorTree(grads[s]));
    EXPECT_NEAR(nj.item<double>(), ne.item<double>(), 1e-5 * ne.item<double>());
    expect_close(pj, pe, "parameters");
  }
  EXPECT_EQ(step.core().traces(), 1);
}

}  // namespace
}  // namespace spore::optim
