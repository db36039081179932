// SPDX-License-Identifier: Apache-2.0
// Control-flow sub-graphs run by a plan are plans of their own (transforms/subgraph_plans.h):
// lowered once per sub-graph and input types, and giving what the interpreter gives.
#include "transforms/subgraph_plans.h"

#include <gtest/gtest.h>

#include "spore/spore.h"

namespace spore {
namespace {

using namespace ops;

// A few steps of x <- tanh(x * w + b) * 0.5 + x, by scan (stacking every x) and by while.
std::pair<Tensor, Tensor> recur(const Tensor& x0, const Tensor& w, const Tensor& b, const Tensor& xs) {
  auto [last, ys] = scan(
      [&](const TensorTree& c, const TensorTree& x) {
        Tensor h = tanh(matmul(c.tensor(), w) + b + x.tensor()) * 0.5 + c.tensor();
        return std::pair<TensorTree, TensorTree>{TensorTree(h), TensorTree(h * 2.0)};
      },
      TensorTree(x0), TensorTree(xs));
  const TensorTree w8 = while_loop(
      [](const TensorTree& t) { return t[1].tensor() < 8.0; },
      [&](const TensorTree& t) {
        return TensorTree{TensorTree(relu(matmul(t[0].tensor(), w)) - 0.25 * t[0].tensor()), TensorTree(t[1].tensor() + 1.0)};
      },
      TensorTree{last, TensorTree(scalar_tensor(0.0, DType::Float32))});
  return {w8[0].tensor(), ys.tensor()};
}

TEST(SubgraphPlans, ScanAndWhileBodiesRunAsPlansAndMatchTheInterpreter) {
  manual_seed(4);
  const Tensor x0 = normal({8, 16}), w = normal({16, 16}) * 0.3, b = normal({16}), xs = normal({12, 8, 16});
  const auto eager = recur(x0, w, b, xs);
  auto jf = jit([&](const Tensor& a, const Tensor& s) {
    auto [y, ys] = recur(a, w, b, s);
    return TensorTree{TensorTree(y), TensorTree(ys)};
  });
  const int64_t before = transforms::subgraph_plans_lowered();
  for (int call = 0; call < 3; ++call) {
    const TensorTree got = jf(x0, xs);
    const auto y = got[0].tensor().to_vector<float>(), ys = got[1].tensor().to_vector<float>();
    const auto ey = eager.first.to_vector<float>(), eys = eager.second.to_vector<float>();
    ASSERT_EQ(y.size(), ey.size());
    ASSERT_EQ(ys.size(), eys.size());
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], ey[i], 1e-4f * (1 + std::abs(ey[i]))) << i;
    for (size_t i = 0; i < ys.size(); ++i) EXPECT_NEAR(ys[i], eys[i], 1e-4f * (1 + std::abs(eys[i]))) << i;
  }
  // The scan body and the while's cond and body, each lowered once across the three calls.
  EXPECT_EQ(transforms::subgraph_plans_lowered() - before, 3);
  // Another thread count: prepared kernels fix theirs, so the sub-graphs are lowered again.
  const int threads = num_threads();
  set_num_threads(threads == 1 ? 2 : 1);
  const TensorTree again = jf(x0, xs);
  set_num_threads(threads);
  EXPECT_EQ(transforms::subgraph_plans_lowered() - before, 6);
  const auto y = again[0].tensor().to_vector<float>(), ey = eager.first.to_vector<float>();
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], ey[i], 1e-4f * (1 + std::abs(ey[i]))) << i;
}

TEST(SubgraphPlans, PyNativeControlFlowStaysInterpretedForItsTapes) {
  // Gradients through eager control flow need the ops dispatched where the tape sees them.
  const Tensor w = normal({4, 4}) * 0.5, x0 = normal({2, 4}), xs = normal({3, 2, 4});
  const int64_t before = transforms::subgraph_plans_lowered();
  auto g = grad([&](const Tensor& wt) { return sum(recur(x0, wt, zeros({4}), xs).first); })(w);
  EXPECT_EQ(transforms::subgraph_plans_lowered(), before);
  // Finite differences on one weight.
  const double eps = 1e-3;
  Tensor wp = w.clone(), wm = w.clone();
  wp.data<float>()[5] += static_cast<float>(eps);
  wm.data<float>()[5] -= static_cast<float>(eps);
  const double fd = (sum(recur(x0, wp, zeros({4}), xs).first).item<float>() -
                     sum(recur(x0, wm, zeros({4}), xs).first).item<float>()) / (2 * eps);
  EXPECT_NEAR(g.to_vector<float>()[5], fd, 2e-2 * (1 + std::abs(fd)));
}

}  // namespace
}  // namespace spore
