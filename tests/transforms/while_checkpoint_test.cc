// SPDX-License-Identifier: Apache-2.0
// The memory-bounded reverse mode of while_loop (WhileOptions::checkpoint_every): the same
// gradients as keeping every trip's residuals (PyNative tape, jit, higher order, the rule on a
// node without residuals), at a fraction of the memory.
#include <gtest/gtest.h>

#include <cmath>

#include "spore/spore.h"
#include "spore/vmap.h"
#include "transforms/control_flow.h"

namespace spore {
namespace {

using namespace ops;

Tensor f64(double v) { return scalar_tensor(v, DType::Float64); }

// x <- tanh(x w) + 0.1 x, n times (a data-dependent trip count); w is a weight the body only reads.
Tensor recur(const Tensor& x0, const Tensor& w, const Tensor& n, int64_t every) {
  auto r = while_loop([&](const TensorTree& c) -> Tensor { return c[1].tensor() < n; },
                      [&](const TensorTree& c) {
                        Tensor x = c[0].tensor();
                        return TensorTree(std::vector<TensorTree>{TensorTree(tanh(matmul(x, w)) + x * 0.1),
                                                                  TensorTree(c[1].tensor() + 1.0)});
                      },
                      TensorTree(std::vector<TensorTree>{TensorTree(x0), TensorTree(zeros_like(n))}),
                      WhileOptions{every});
  return sum(r[0].tensor() * r[0].tensor());
}

void expect_close(const std::vector<Tensor>& got, const std::vector<Tensor>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < want.size(); ++k) {
    const auto g = got[k].to_vector<double>(), e = want[k].to_vector<double>();
    ASSERT_EQ(g.size(), e.size()) << what;
    for (size_t i = 0; i < e.size(); ++i) EXPECT_NEAR(g[i], e[i], tol) << what << " output " << k << " element " << i;
  }
}

TEST(WhileCheckpoint, GradientsEqualKeepingEveryTrip) {
  manual_seed(3);
  const Tensor x0 = normal({2, 3}, 0, 1, {DType::Float64}), w = normal({3, 3}, 0, 0.6, {DType::Float64});
  for (int64_t every : {1, 2, 3, 7}) {
    auto ref = [](const Tensor& x, const Tensor& wv, const Tensor& n) { return recur(x, wv, n, 0); };
    auto ck = [every](const Tensor& x, const Tensor& wv, const Tensor& n) { return recur(x, wv, n, every); };
    auto jg = jit([&](const Tensor& x, const Tensor& wv, const Tensor& n) { return grad(ck, {0, 1})(x, wv, n); });
    for (double trips : {0.0, 1.0, 6.0, 10.0}) {
      const Tensor n = f64(trips);
      const std::string what = "every " + std::to_string(every) + ", trips " + std::to_string(trips);
      const auto want = grad(ref, {0, 1})(x0, w, n);         // PyNative tape over every trip
      expect_close(grad(ck, {0, 1})(x0, w, n), want, 1e-12, what + " (PyNative)");  // one recorded node
      expect_close(jg(x0, w, n), want, 1e-12, what + " (jit)");
    }
    EXPECT_EQ(jg.core().traces(), 1);  // one graph for every trip count
    const std::string text = jg.core().last_graph_text();
    // The forward node is the loop over segments; the backward recomputes one a step.
    EXPECT_NE(text.find("@checkpoint_segments("), std::string::npos) << text;
    EXPECT_NE(text.find("@checkpoint_segment_vjp("), std::string::npos) << text;
    EXPECT_EQ(text.find(", 3, 3]"), std::string::npos) << "the weight was stacked:\n" << text;
  }
}

TEST(WhileCheckpoint, MatchesFiniteDifferences) {
  manual_seed(4);
  const Tensor x0 = normal({2, 3}, 0, 1, {DType::Float64}), w = normal({3, 3}, 0, 0.6, {DType::Float64});
  const Tensor n = f64(9);
  auto f = [&](const Tensor& wv) { return recur(x0, wv, n, 4); };
  const auto g = jit([&](const Tensor& wv) { return grad(f)(wv); })(w).to_vector<double>();
  const auto wv = w.to_vector<double>();
  const double h = 1e-6;
  for (size_t i = 0; i < wv.size(); ++i) {
    auto plus = wv, minus = wv;
    plus[i] += h;
    minus[i] -= h;
    const double fd = (f(from_vector(plus, {3, 3})).item<double>() - f(from_vector(minus, {3, 3})).item<double>()) / (2 * h);
    EXPECT_NEAR(g[i], fd, 1e-6 * std::max(1.0, std::abs(fd))) << i;
  }
}

TEST(WhileCheckpoint, SecondOrderAndForwardOverReverse) {
  auto newton = [](const Tensor& a, int64_t every) {  // sqrt(a) by Newton's iteration
    return while_loop([&](const TensorTree& x) -> Tensor { return abs(x.tensor() * x.tensor() - a) > 1e-13; },
                      [&](const TensorTree& x) { return TensorTree((x.tensor() + a / x.tensor()) * 0.5); },
                      TensorTree(a + 1.0), WhileOptions{every})
        .tensor();
  };
  auto f = [&](const Tensor& a) { return newton(a, 2); };
  for (double a : {2.0, 9.0}) {
    EXPECT_NEAR(jit([&](const Tensor& x) { return grad(f)(x); })(f64(a)).item<double>(), 0.5 / std::sqrt(a), 1e-9);
    EXPECT_NEAR(grad(f)(f64(a)).item<double>(), 0.5 / std::sqrt(a), 1e-9);
    const double d2 = -0.25 * std::pow(a, -1.5);
    EXPECT_NEAR(jit([&](const Tensor& x) { return grad(grad(f))(x); })(f64(a)).item<double>(), d2, 1e-7);
    EXPECT_NEAR(jit([&](const Tensor& x) { return hvp(f, x, ones_like(x)); })(f64(a)).item<double>(), d2, 1e-7);
  }
}

// An integer trip counter (not differentiated), second order in PyNative, and level 2.
TEST(WhileCheckpoint, IntegerCounterSecondOrderAndLevelTwo) {
  auto f = [](const Tensor& x, int64_t every) {  // x^(2^5) through 5 squarings
    auto r = while_loop([](const TensorTree& c) -> Tensor { return c[1].tensor() < int64_t{5}; },
                        [](const TensorTree& c) {
                          return TensorTree(std::vector<TensorTree>{TensorTree(c[0].tensor() * c[0].tensor()),
                                                                    TensorTree(c[1].tensor() + int64_t{1})});
                        },
                        TensorTree(std::vector<TensorTree>{TensorTree(x), TensorTree(scalar_tensor(int64_t{0}, DType::Int64))}),
                        WhileOptions{every});
    return r[0].tensor();
  };
  auto ck = [&](const Tensor& x) { return f(x, 2); };
  const double x = 1.01, d1 = 32 * std::pow(x, 31), d2 = 32 * 31 * std::pow(x, 30);
  EXPECT_NEAR(grad(ck)(f64(x)).item<double>(), d1, 1e-9 * d1);
  EXPECT_NEAR(grad(grad(ck))(f64(x)).item<double>(), d2, 1e-9 * d2);  // PyNative, twice recorded
  EXPECT_NEAR(jit([&](const Tensor& v) { return grad(ck)(v); })(f64(x)).item<double>(), d1, 1e-9 * d1);
  ::setenv("SPORE_OPT_LEVEL", "2", 1);
  auto j2 = jit([&](const Tensor& v) { return grad(grad(ck))(v); });
  const double got2 = j2(f64(x)).item<double>();
  ::unsetenv("SPORE_OPT_LEVEL");
  EXPECT_NEAR(got2, d2, 1e-9 * d2);
}

// Per-example gradients through a checkpointed loop whose trip count differs per example
// (vmap(grad(f)): the lanes run until every one is done).
TEST(WhileCheckpoint, VmapOfGradWithPerExampleTrips) {
  manual_seed(8);
  const Tensor x0 = normal({4, 2, 3}, 0, 1, {DType::Float64}), w = normal({3, 3}, 0, 0.6, {DType::Float64});
  const Tensor n = from_vector<double>({0, 2, 5, 3});
  auto ck = [&](const Tensor& x, const Tensor& nv) { return recur(x, w, nv, 2); };
  auto ref = [&](const Tensor& x, const Tensor& nv) { return recur(x, w, nv, 0); };
  const Tensor got = vmap([&](const Tensor& x, const Tensor& nv) { return grad(ck, {0})(x, nv); })(x0, n);
  for (int64_t i = 0; i < 4; ++i) {
    const Tensor want = grad(ref, {0})(select(x0, 0, i), select(n, 0, i));
    expect_close({select(got, 0, i)}, {want}, 1e-12, "example " + std::to_string(i));
  }
}

// PyNative records the same loop as the same node call after call: no new graphs or trip
// symbols per step (a training loop would otherwise grow the symbol table every step).
TEST(WhileCheckpoint, PyNativeReusesTheNodeEveryCall) {
  manual_seed(7);
  const Tensor x0 = normal({2, 3}, 0, 1, {DType::Float64}), w = normal({3, 3}, 0, 0.6, {DType::Float64});
  auto ck = [](const Tensor& x, const Tensor& wv, const Tensor& n) { return recur(x, wv, n, 3); };
  const auto first = grad(ck, {0, 1})(x0, w, f64(7));
  const Dim before = new_symbol("checkpoint_probe_before");
  for (int i = 0; i < 4; ++i) expect_close(grad(ck, {0, 1})(x0, w, f64(7)), first, 0, "call " + std::to_string(i));
  const Dim after = new_symbol("checkpoint_probe_after");
  EXPECT_EQ(std::abs(after - before), 1) << "symbols were made between the probes";
}

// A node with no residual plan (as read back from a file): its vjp rule makes the checkpoints.
TEST(WhileCheckpoint, RuleOnANodeWithoutResiduals) {
  manual_seed(5);
  const Tensor x0 = normal({2, 3}, 0, 1, {DType::Float64}), w = normal({3, 3}, 0, 0.6, {DType::Float64});
  const std::vector<TensorType> sig{{DType::Float64, false, {2, 3}}, {DType::Float64, false, {3, 3}},
                                    {DType::Float64, false, {}}};
  transforms::ControlFlowAttrs a;
  a.num_carry = 3;
  a.checkpoint_every = 2;
  a.graphs.push_back(transforms::trace_graph("cond", sig, [](std::span<const Tensor> v) {
    return std::vector<Tensor>{v[2] < 5.0};
  }));
  a.graphs.push_back(transforms::trace_graph("body", sig, [](std::span<const Tensor> v) {
    return std::vector<Tensor>{tanh(matmul(v[0], v[1])) + v[0] * 0.1, v[1], v[2] + 1.0};
  }));
  const std::vector<Tensor> in{x0, w, f64(0)};
  const std::vector<Tensor> out = transforms::call_control_flow(transforms::while_primitive(), a, in);
  const std::vector<Tensor> cts{out[0] * 2.0, Tensor(), Tensor()};
  const std::vector<TensorType> types = sig;
  const bool needs[3] = {true, true, false};
  std::vector<Tensor> in_ct(3);
  transforms::while_primitive().vjp(VjpArgs{&a, in, out, types, types, cts, needs}, in_ct);
  auto ref = [](const Tensor& x, const Tensor& wv) { return recur(x, wv, f64(5), 0); };
  expect_close({in_ct[0], in_ct[1]}, grad(ref, {0, 1})(x0, w), 1e-12, "rule");
  // The same node run eagerly under a PyNative tape (a loaded graph interpreted): recorded as
  // one node whose vjp recomputes.
  auto eager = [&](const Tensor& x, const Tensor& wv) {
    const Tensor r = transforms::call_control_flow(transforms::while_primitive(), a, std::vector<Tensor>{x, wv, f64(0)})[0];
    return sum(r * r);
  };
  expect_close(grad(eager, {0, 1})(x0, w), grad(ref, {0, 1})(x0, w), 1e-12, "eager node");
}

// Peak memory of the backward: every trip's residuals against one segment's and the checkpoints.
std::pair<size_t, std::vector<float>> grad_peak(int64_t every, bool under_jit) {
  manual_seed(6);
  const Tensor x0 = normal({128, 256}, 0, 1), w = normal({256, 256}, 0, 0.1), n = scalar_tensor(64.0);
  auto f = [every](const Tensor& x, const Tensor& wv, const Tensor& nv) { return recur(x, wv, nv, every); };
  auto jg = jit([&](const Tensor& x, const Tensor& wv, const Tensor& nv) { return grad(f, {1})(x, wv, nv); });
  if (under_jit) (void)jg(x0, w, n);  // compiled once, outside the measurement
  const size_t base = memory_stats().bytes_in_use;
  reset_peak_memory_stats();
  const Tensor g = under_jit ? jg(x0, w, n) : grad(f, {1})(x0, w, n);
  return {memory_stats().peak_bytes_in_use - base, g.to_vector<float>()};
}

TEST(WhileCheckpoint, BoundsTheBackwardsMemory) {
  for (bool under_jit : {false, true}) {
    const auto [all, g_all] = grad_peak(0, under_jit);
    const auto [ck, g_ck] = grad_peak(8, under_jit);
    // 64 trips of a 128 KiB state: every trip keeps ~2-4 of them (>= 16 MiB); checkpointing
    // every 8th keeps 8 checkpoints and one segment's residuals (about 3 MiB).
    EXPECT_GT(all, size_t{16} << 20) << under_jit;
    EXPECT_LT(ck * 3, all) << "checkpointed " << ck << " bytes, every trip " << all << " (jit " << under_jit << ")";
    ASSERT_EQ(g_ck.size(), g_all.size());
    double scale = 0;
    for (float v : g_all) scale = std::max(scale, static_cast<double>(std::abs(v)));
    ASSERT_GT(scale, 0.0);
    for (size_t i = 0; i < g_all.size(); ++i) ASSERT_NEAR(g_ck[i], g_all[i], 1e-5 * scale) << i << " jit " << under_jit;
  }
}

TEST(WhileCheckpoint, TextFormAndErrors) {
  // The option prints only when set, and parses back (files from before it still load).
  auto traced = [](int64_t every) {
    auto j = jit([every](const Tensor& x) { return recur(x, eye(3, -1, {DType::Float64}), f64(3), every); });
    (void)j(ones({2, 3}, {DType::Float64}));
    return j.core().last_graph_text();
  };
  EXPECT_EQ(traced(0).find("checkpoint_every"), std::string::npos);
  EXPECT_NE(traced(5).find("checkpoint_every=5"), std::string::npos);
  try {
    (void)recur(ones({2, 3}, {DType::Float64}), eye(3, -1, {DType::Float64}), f64(3), -1);
    FAIL() << "a negative checkpoint_every was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint_every"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace spore
