// SPDX-License-Identifier: Apache-2.0
// Derivatives through traced control flow (if/while/scan nodes transformed by their rules)
// equal the PyNative derivatives (tape over the path taken) and the analytic values.
#include <gtest/gtest.h>

#include <cmath>

#include "spore/spore.h"

namespace spore {
namespace {

using namespace ops;

Tensor f64(double v) { return scalar_tensor(v, DType::Float64); }

Tensor piecewise(const Tensor& x) {  // x^3 for x > 0, else sin(x) * 2
  return cond(
             x > 0.0, [](const TensorTree& t) { return TensorTree(t.tensor() * t.tensor() * t.tensor()); },
             [](const TensorTree& t) { return TensorTree(sin(t.tensor()) * 2.0); }, x)
      .tensor();
}

TEST(ControlFlowGrad, CondFirstAndSecondOrder) {
  for (double v : {1.5, -0.5}) {
    const double d1 = v > 0 ? 3 * v * v : 2 * std::cos(v), d2 = v > 0 ? 6 * v : -2 * std::sin(v);
    EXPECT_NEAR(grad(piecewise)(f64(v)).item<double>(), d1, 1e-12);
    EXPECT_NEAR(jit([](const Tensor& x) { return grad(piecewise)(x); })(f64(v)).item<double>(), d1, 1e-12);
    EXPECT_NEAR(jit([](const Tensor& x) { return grad(grad(piecewise))(x); })(f64(v)).item<double>(), d2, 1e-12);
    EXPECT_NEAR(jit([](const Tensor& x) { return jvp(piecewise, x, ones_like(x)).second; })(f64(v)).item<double>(), d1, 1e-12);
  }
}

// Newton's iteration for sqrt(a): the trip count depends on a.
Tensor newton_sqrt(const Tensor& a) {
  return while_loop([&](const TensorTree& x) -> Tensor { return abs(x.tensor() * x.tensor() - a) > 1e-13; },
                    [&](const TensorTree& x) { return TensorTree((x.tensor() + a / x.tensor()) * 0.5); },
                    TensorTree(a + 1.0))
      .tensor();
}

TEST(ControlFlowGrad, ReverseModeThroughWhileWithDataDependentTrips) {
  auto jg = jit([](const Tensor& a) { return grad(newton_sqrt)(a); });
  for (double a : {2.0, 9.0, 1000.0}) {
    const double want = 0.5 / std::sqrt(a);
    EXPECT_NEAR(grad(newton_sqrt)(f64(a)).item<double>(), want, 1e-9) << a;  // PyNative tape
    EXPECT_NEAR(jg(f64(a)).item<double>(), want, 1e-9) << a;                 // while node + rule
  }
  EXPECT_EQ(jg.core().traces(), 1);  // one graph for every trip count
  EXPECT_NE(jg.core().last_graph_text().find("while"), std::string::npos);
  // Forward mode through the same loop, and the second derivative (-1/4 a^-3/2).
  auto jt = jit([](const Tensor& a) { return jvp(newton_sqrt, a, ones_like(a)).second; });
  EXPECT_NEAR(jt(f64(9.0)).item<double>(), 0.5 / 3.0, 1e-9);
  auto jgg = jit([](const Tensor& a) { return grad(grad(newton_sqrt))(a); });
  EXPECT_NEAR(jgg(f64(4.0)).item<double>(), -0.25 / 8.0, 1e-7);
  // Forward over reverse (hvp) through the loop's augmented forward pass.
  auto jh = jit([](const Tensor& a) { return hvp(newton_sqrt, a, ones_like(a)); });
  EXPECT_NEAR(jh(f64(4.0)).item<double>(), -0.25 / 8.0, 1e-7);
}

Tensor scan_poly(const Tensor& x, const Tensor& coeffs) {  // Horner: sum c_i x^(n-1-i)
  auto [c, ys] = scan([&](const TensorTree& acc, const TensorTree& ci) {
                        Tensor n = acc.tensor() * x + ci.tensor();
                        return std::make_pair(TensorTree(n), TensorTree(n));
                      },
                      TensorTree(zeros_like(x)), TensorTree(coeffs));
  return c.tensor() + sum(ys.tensor()) * 0.0;
}

TEST(ControlFlowGrad, ScanGradientsMatchPyNative) {
  Tensor coeffs = tensor({2.0, -1.0, 3.0, 0.5});
  auto f = [&](const Tensor& x) { return scan_poly(x, coeffs); };
  const double x = 1.7;
  const double d1 = 3 * 2.0 * x * x - 2 * x + 3.0, d2 = 12.0 * x - 2;
  EXPECT_NEAR(grad(f)(f64(x)).item<double>(), d1, 1e-12);
  EXPECT_NEAR(jit([&](const Tensor& v) { return grad(f)(v); })(f64(x)).item<double>(), d1, 1e-12);
  EXPECT_NEAR(jit([&](const Tensor& v) { return grad(grad(f))(v); })(f64(x)).item<double>(), d2, 1e-10);
  EXPECT_NEAR(jit([&](const Tensor& v) { return jvp(f, v, ones_like(v)).second; })(f64(x)).item<double>(), d1, 1e-12);
  // Gradient with respect to the scanned sequence: d/dc_i = x^(n-1-i).
  auto gc = jit([&](const Tensor& c) { return grad([&](const Tensor& cc) { return scan_poly(f64(x), cc); })(c); })(coeffs);
  auto want = std::vector<double>{x * x * x, x * x, x, 1.0};
  auto got = gc.to_vector<double>();
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], want[i], 1e-12);
}

}  // namespace
}  // namespace spore
