// SPDX-License-Identifier: Apache-2.0
// cond / switch_case / while_loop / scan / fori_loop: eager C++ control flow and traced nodes
// give the same values; gradients flow through both.
#include <gtest/gtest.h>

#include <cmath>

#include "error_matchers.h"
#include "spore/spore.h"

namespace spore {
namespace {

using namespace ops;

Tensor f64(double v) { return scalar_tensor(v, DType::Float64); }

// |x| by cond, times a captured weight.
Tensor cond_abs(const Tensor& x, const Tensor& w) {
  return cond(
             sum(x) > 0.0, [&](const TensorTree& t) { return TensorTree(t.tensor() * w); },
             [&](const TensorTree& t) { return TensorTree(-t.tensor() * w); }, x)
      .tensor();
}

TEST(ControlFlow, CondEagerAndJitAgree) {
  Tensor w = f64(3.0);
  auto f = [&](const Tensor& x) { return cond_abs(x, w); };
  auto jf = jit(f);
  for (double v : {2.0, -5.0}) {
    EXPECT_DOUBLE_EQ(f(f64(v)).item<double>(), std::abs(v) * 3.0);
    EXPECT_DOUBLE_EQ(jf(f64(v)).item<double>(), std::abs(v) * 3.0);
  }
  EXPECT_EQ(jf.core().traces(), 1);  // one graph serves both branches
  EXPECT_NE(jf.core().last_graph_text().find("if"), std::string::npos);
}

TEST(ControlFlow, SwitchCase) {
  std::vector<TreeFunction> br = {[](const TensorTree& t) { return TensorTree(t.tensor() + 1.0); },
                                  [](const TensorTree& t) { return TensorTree(t.tensor() * 10.0); }};
  auto f = [&](const Tensor& i, const Tensor& x) { return switch_case(i, br, x).tensor(); };
  auto jf = jit(f);
  EXPECT_DOUBLE_EQ(f(scalar_tensor(1, DType::Int64), f64(2.0)).item<double>(), 20.0);
  EXPECT_DOUBLE_EQ(jf(scalar_tensor(0, DType::Int64), f64(2.0)).item<double>(), 3.0);
  EXPECT_DOUBLE_EQ(jf(scalar_tensor(7, DType::Int64), f64(2.0)).item<double>(), 20.0);  // clamped
}

// Newton's iteration for sqrt(a) with a data-dependent exit.
Tensor newton_sqrt(const Tensor& a) {
  auto out = while_loop([&](const TensorTree& x) -> Tensor { return abs(x.tensor() * x.tensor() - a) > 1e-12; },
                        [&](const TensorTree& x) { return TensorTree((x.tensor() + a / x.tensor()) * 0.5); },
                        TensorTree(a + 1.0));
  return out.tensor();
}

TEST(ControlFlow, WhileNewtonEagerJitAndGrad) {
  EXPECT_NEAR(newton_sqrt(f64(9.0)).item<double>(), 3.0, 1e-12);
  auto jf = jit(newton_sqrt);
  EXPECT_NEAR(jf(f64(9.0)).item<double>(), 3.0, 1e-12);
  EXPECT_NEAR(jf(f64(2.0)).item<double>(), std::sqrt(2.0), 1e-12);
  // PyNative: the tape records the iterations that ran.
  EXPECT_NEAR(grad(newton_sqrt)(f64(9.0)).item<double>(), 1.0 / 6.0, 1e-9);
}

TEST(ControlFlow, ScanAndForiLoop) {
  Tensor xs = tensor({1.0, 2.0, 3.0, 4.0}).to(DType::Float32);
  auto f = [](const Tensor& xs) {
    auto [c, ys] = scan([](const TensorTree& c, const TensorTree& x) {
                          Tensor n = c.tensor() * x.tensor() + 1.0;
                          return std::make_pair(TensorTree(n), TensorTree(n * 2.0));
                        },
                        TensorTree(f64(0.0).to(DType::Float32)), TensorTree(xs));
    return TensorTree{c, ys};
  };
  auto eager = f(xs);
  auto traced = jit(f)(xs);
  // c: 1, 3, 10, 41
  EXPECT_FLOAT_EQ(eager[0].tensor().item<float>(), 41.0f);
  EXPECT_EQ(eager[1].tensor().to_vector<float>(), std::vector<float>({2, 6, 20, 82}));
  EXPECT_EQ(traced[0].tensor().item<float>(), 41.0f);
  EXPECT_EQ(traced[1].tensor().to_vector<float>(), eager[1].tensor().to_vector<float>());
  auto pow3 = [](const Tensor& x) {
    return fori_loop(0, 3, [&](const Tensor&, const TensorTree& c) { return TensorTree(c.tensor() * x); }, TensorTree(ones_like(x)))
        .tensor();
  };
  EXPECT_DOUBLE_EQ(pow3(f64(2.0)).item<double>(), 8.0);
  EXPECT_DOUBLE_EQ(jit(pow3)(f64(2.0)).item<double>(), 8.0);
  EXPECT_DOUBLE_EQ(grad(pow3)(f64(2.0)).item<double>(), 12.0);
}

TEST(ControlFlow, ClearErrors) {
  auto bad_cond = jit([](const Tensor& x) {
    return cond(sum(x) > 0.0, [](const TensorTree& t) { return TensorTree(t.tensor()); },
                [](const TensorTree& t) { return TensorTree(concat({t.tensor(), t.tensor()}, 0)); }, x)
        .tensor();
  });
  EXPECT_ERROR(bad_cond(tensor({1.0, 2.0})), "true_fn returns (float64(2,)), false_fn returns (float64(4,))");
  auto grow = [](const Tensor& x) {
    return while_loop([](const TensorTree& c) -> Tensor { return scalar_tensor(c.tensor().size(0) < 4, DType::Bool); },
                      [](const TensorTree& c) { return TensorTree(concat({c.tensor(), c.tensor()}, 0)); }, x)
        .tensor();
  };
  EXPECT_ERROR(grow(tensor({1.0})), "body_fn changes the carried values");
  EXPECT_ERROR(jit(grow)(tensor({1.0})), "body_fn changes the carried values");
}

// A scan over zero steps returns the carry as it is and ys empty along a new leading axis,
// shaped from one trace of fn, in both modes.
TEST(ControlFlow, EmptyScanHasTypedEmptyYs) {
  auto f = [](const Tensor& xs) {
    auto [c, ys] = scan([](const TensorTree& acc, const TensorTree& x) {
                          Tensor n = acc.tensor() + x.tensor();
                          return std::make_pair(TensorTree(n), TensorTree(std::vector<TensorTree>{TensorTree(n * 2.0), TensorTree(sum(n) > 0.0)}));
                        },
                        TensorTree(ones({3})), TensorTree(xs));
    return std::vector<Tensor>{c.tensor(), ys[0].tensor(), ys[1].tensor()};
  };
  const Tensor empty = zeros({0, 3});
  for (const auto& r : {f(empty), jit(f)(empty)}) {
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0].to_vector<float>(), std::vector<float>(3, 1.0f));
    EXPECT_EQ(r[1].shape(), Shape({0, 3}));
    EXPECT_EQ(r[2].shape(), Shape({0}));
    EXPECT_EQ(r[2].dtype(), DType::Bool);
  }
  EXPECT_EQ(jit(f)(ones({2, 3}))[1].shape(), Shape({2, 3}));
}

}  // namespace
}  // namespace spore
