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

// How often `op{` occurs in a graph's text (its nodes and nested sub-graphs).
int count_op(const std::string& text, const std::string& op) {
  int n = 0;
  for (size_t at = text.find(" " + op + "{"); at != std::string::npos; at = text.find(" " + op + "{", at + 1)) ++n;
  return n;
}

// A node built for reverse mode passes its residuals out: the backward branches read them and
// never recompute the forward (sin and the cube appear once, in the forward branches).
TEST(ControlFlowGrad, CondPassesResidualsOutInsteadOfRecomputing) {
  auto jg = jit([](const Tensor& x) { return grad(piecewise)(x); });
  for (double v : {1.5, -0.5}) {
    const double d1 = v > 0 ? 3 * v * v : 2 * std::cos(v);
    EXPECT_NEAR(jg(f64(v)).item<double>(), d1, 1e-12);
    // float32 keeps its dtype through the residuals (the literal 2.0 stays a weak constant).
    const Tensor g32 = jg(scalar_tensor(v, DType::Float32));
    EXPECT_EQ(g32.dtype(), DType::Float32);
    EXPECT_NEAR(g32.item<float>(), d1, 1e-5);
  }
  const std::string text = jg.core().last_graph_text();
  EXPECT_EQ(count_op(text, "if"), 2) << text;
  EXPECT_EQ(count_op(text, "sin"), 1) << text;  // the backward branch uses cos and the saved values only
  // The forward if outputs the branch value plus residuals; the backward if takes them.
  EXPECT_NE(text.find("%3, %4, %5 = if{"), std::string::npos) << text;
}

TEST(ControlFlowGrad, SwitchGradientsUnderJit) {
  std::vector<TreeFunction> br = {[](const TensorTree& t) { return TensorTree(exp(t.tensor())); },
                                  [](const TensorTree& t) { return TensorTree(t.tensor() * t.tensor() * 3.0); },
                                  [](const TensorTree& t) { return TensorTree(tanh(t.tensor())); }};
  auto f = [&](const Tensor& x, const Tensor& i) { return switch_case(i, br, x).tensor(); };
  auto jg = jit([&](const Tensor& x, const Tensor& i) { return grad(f)(x, i); });
  const double x = 0.7, th = std::tanh(x);
  const double want[] = {std::exp(x), 6 * x, 1 - th * th};
  for (int64_t k = 0; k < 3; ++k) {
    const Tensor i = scalar_tensor(k, DType::Int64);
    EXPECT_NEAR(jg(f64(x), i).item<double>(), want[k], 1e-12) << k;
    EXPECT_NEAR(grad(f)(f64(x), i).item<double>(), want[k], 1e-12) << k;
  }
  EXPECT_EQ(jg.core().traces(), 1);
  EXPECT_EQ(count_op(jg.core().last_graph_text(), "exp"), 1);
}

// An RNN over scan: per-step residuals are stacked, the weight the body only reads is carried
// (not stacked per step), and the reverse pass never recomputes tanh.
Tensor rnn(const Tensor& h0, const Tensor& xs, const Tensor& w) {
  auto [h, ys] = scan([&](const TensorTree& hc, const TensorTree& x) {
                        Tensor n = tanh(matmul(hc.tensor(), w) + x.tensor());
                        return std::make_pair(TensorTree(n), TensorTree(n * n));
                      },
                      TensorTree(h0), TensorTree(xs));
  return sum(h.tensor()) + sum(ys.tensor());
}

TEST(ControlFlowGrad, ScanStacksResidualsAndCarriesInvariants) {
  manual_seed(3);
  const Tensor h0 = normal({2, 3}, 0, 1, {DType::Float64}), xs = normal({5, 2, 3}, 0, 1, {DType::Float64}),
               w = normal({3, 3}, 0, 0.5, {DType::Float64});
  auto jg = jit([](const Tensor& a, const Tensor& b, const Tensor& c) { return grad(rnn, {0, 1, 2})(a, b, c); });
  const auto got = jg(h0, xs, w), want = grad(rnn, {0, 1, 2})(h0, xs, w);
  ASSERT_EQ(got.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    const auto g = got[k].to_vector<double>(), e = want[k].to_vector<double>();
    ASSERT_EQ(g.size(), e.size());
    for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], e[i], 1e-12) << k << " " << i;
  }
  const std::string text = jg.core().last_graph_text();
  EXPECT_EQ(count_op(text, "scan"), 2) << text;
  EXPECT_EQ(count_op(text, "tanh"), 1) << text;
  EXPECT_EQ(text.find("float64[5, 3, 3]"), std::string::npos) << "the weight was stacked per step:\n" << text;
  // Second order through the residual-passing node (its residuals get cotangents too).
  auto loss_w = [&](const Tensor& wv) { return rnn(h0, xs, wv); };
  const Tensor v = ones_like(w);
  const auto hv = jit([&](const Tensor& wv) { return hvp(loss_w, wv, v); })(w).to_vector<double>();
  const auto hv_eager = hvp(loss_w, w, v).to_vector<double>();
  for (size_t i = 0; i < hv.size(); ++i) EXPECT_NEAR(hv[i], hv_eager[i], 1e-10) << i;
  const auto gg = jit([&](const Tensor& wv) { return grad([&](const Tensor& u) { return sum(grad(loss_w)(u) * v); })(wv); })(w);
  const auto gg_eager = grad([&](const Tensor& u) { return sum(grad(loss_w)(u) * v); })(w);
  const auto a = gg.to_vector<double>(), b = gg_eager.to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-10) << i;
}

// A cond inside a scan body: the inner node's residuals become the outer body's residuals.
TEST(ControlFlowGrad, NestedCondInScan) {
  auto f = [](const Tensor& xs) {
    auto [c, ys] = scan([](const TensorTree& acc, const TensorTree& x) {
                          Tensor y = cond(x.tensor() > 0.0, [](const TensorTree& t) { return TensorTree(exp(t.tensor())); },
                                          [](const TensorTree& t) { return TensorTree(sin(t.tensor()) * 3.0); }, x)
                                         .tensor();
                          return std::make_pair(TensorTree(acc.tensor() * y), TensorTree(y));
                        },
                        TensorTree(scalar_tensor(1.0, DType::Float64)), TensorTree(xs));
    return c.tensor() + sum(ys.tensor());
  };
  const Tensor xs = tensor({0.3, -0.4, 1.1, -2.0});
  const auto got = jit([&](const Tensor& x) { return grad(f)(x); })(xs).to_vector<double>();
  const auto want = grad(f)(xs).to_vector<double>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
}

// Reverse mode through a while stacks the residuals of each trip (not the carries, and not the
// loop-invariant ones) and runs one reversed scan over them: the forward loop runs once.
TEST(ControlFlowGrad, WhileStacksResidualsAndRunsOnce) {
  auto jg = jit([](const Tensor& a) { return grad(newton_sqrt)(a); });
  EXPECT_NEAR(jg(f64(2.0)).item<double>(), 0.5 / std::sqrt(2.0), 1e-9);
  const std::string text = jg.core().last_graph_text();
  EXPECT_EQ(count_op(text, "while"), 1) << text;
  EXPECT_EQ(count_op(text, "scan"), 1) << text;
  EXPECT_EQ(count_op(text, "div"), 2) << text;  // the forward's, and its derivative's; no recompute
}

// A recurrence with a weight it only reads, run a data-dependent number of times.
Tensor recur(const Tensor& x0, const Tensor& w, const Tensor& n) {
  auto r = while_loop([&](const TensorTree& c) -> Tensor { return c[1].tensor() < n; },
                      [&](const TensorTree& c) {
                        Tensor x = c[0].tensor();
                        return TensorTree(std::vector<TensorTree>{TensorTree(tanh(matmul(x, w)) + x * 0.1),
                                                                  TensorTree(c[1].tensor() + 1.0)});
                      },
                      TensorTree(std::vector<TensorTree>{TensorTree(x0), TensorTree(zeros_like(n))}));
  return sum(r[0].tensor());
}

TEST(ControlFlowGrad, WhileCarriesInvariantWeightsInsteadOfStackingThem) {
  manual_seed(9);
  const Tensor x0 = normal({2, 3}, 0, 1, {DType::Float64}), w = normal({3, 3}, 0, 0.6, {DType::Float64});
  auto jg = jit([](const Tensor& x, const Tensor& wv, const Tensor& n) { return grad(recur, {0, 1})(x, wv, n); });
  for (double trips : {0.0, 1.0, 4.0}) {
    const Tensor n = f64(trips);
    const auto got = jg(x0, w, n), want = grad(recur, {0, 1})(x0, w, n);
    for (size_t k = 0; k < 2; ++k) {
      const auto g = got[k].to_vector<double>(), e = want[k].to_vector<double>();
      for (size_t i = 0; i < e.size(); ++i) EXPECT_NEAR(g[i], e[i], 1e-12) << trips << " " << k << " " << i;
    }
  }
  EXPECT_EQ(jg.core().traces(), 1);
  const std::string text = jg.core().last_graph_text();
  EXPECT_EQ(text.find(", 3, 3]"), std::string::npos) << "the weight was stacked per trip:\n" << text;
  EXPECT_NE(text.find(", 2, 3]"), std::string::npos) << text;  // the state x is
}

// A while inside a cond: the loop's residuals are sized at run time, so the cond recomputes
// rather than zero-filling them in the other branch; both branches differentiate under jit.
TEST(ControlFlowGrad, WhileInsideCondUnderJit) {
  auto f = [](const Tensor& a) {
    return cond(a > 0.0, [](const TensorTree& t) { return TensorTree(newton_sqrt(t.tensor())); },
                [](const TensorTree& t) { return TensorTree(t.tensor() * t.tensor()); }, a)
        .tensor();
  };
  auto jg = jit([&](const Tensor& a) { return grad(f)(a); });
  EXPECT_NEAR(jg(f64(4.0)).item<double>(), 0.25, 1e-9);
  EXPECT_NEAR(jg(f64(-3.0)).item<double>(), -6.0, 1e-12);
}

// Loops in loops: a Newton while inside a scan, with a different trip count at each step.
TEST(ControlFlowGrad, WhileInsideScanWithVaryingTripsUnderJit) {
  auto f = [](const Tensor& as) {
    auto [c, ys] = scan([](const TensorTree& acc, const TensorTree& a) {
                          Tensor r = newton_sqrt(a.tensor());
                          return std::make_pair(TensorTree(acc.tensor() + r), TensorTree(r));
                        },
                        TensorTree(f64(0.0)), TensorTree(as));
    return c.tensor() + sum(ys.tensor() * ys.tensor());
  };
  const Tensor as = tensor({2.0, 9.0, 1000.0, 0.25});
  const auto got = jit([&](const Tensor& a) { return grad(f)(a); })(as).to_vector<double>();
  const auto want = grad(f)(as).to_vector<double>();
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-9) << i;
    const double a = as.to_vector<double>()[i];
    EXPECT_NEAR(want[i], 0.5 / std::sqrt(a) + 1.0, 1e-9) << i;  // d/da (sqrt(a) + a)
  }
}

// grad of grad through a while whose body has a kink (relu): some residuals get no cotangent
// in the second pass and are zero-filled at their run-time size.
TEST(ControlFlowGrad, SecondOrderThroughWhileWithReluUnderJit) {
  auto f = [](const Tensor& x) {
    auto r = while_loop([](const TensorTree& c) -> Tensor { return c[1].tensor() < 3.0; },
                        [](const TensorTree& c) {
                          const Tensor v = c[0].tensor();
                          return TensorTree(std::vector<TensorTree>{TensorTree(relu(v) * v + v * 0.5), TensorTree(c[1].tensor() + 1.0)});
                        },
                        TensorTree(std::vector<TensorTree>{TensorTree(x), TensorTree(f64(0.0))}));
    return sum(r[0].tensor());
  };
  const Tensor x = tensor({0.7, -0.4});
  auto g2 = [&](const Tensor& v) { return sum(grad(f)(v)); };
  const auto got = jit([&](const Tensor& v) { return grad(g2)(v); })(x).to_vector<double>();
  const auto want = grad(g2)(x).to_vector<double>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-10) << i;
}

// A switch's jvp, and second order through it.
TEST(ControlFlowGrad, SwitchForwardModeAndSecondOrder) {
  std::vector<TreeFunction> br = {[](const TensorTree& t) { return TensorTree(sin(t.tensor())); },
                                  [](const TensorTree& t) { return TensorTree(t.tensor() * t.tensor() * t.tensor()); }};
  auto f = [&](const Tensor& x, const Tensor& i) { return switch_case(i, br, x).tensor(); };
  const Tensor one = scalar_tensor(int64_t{1}, DType::Int64), zero = scalar_tensor(int64_t{0}, DType::Int64);
  auto jt = jit([&](const Tensor& x, const Tensor& i) { return jvp([&](const Tensor& v) { return f(v, i); }, x, ones_like(x)).second; });
  EXPECT_NEAR(jt(f64(2.0), one).item<double>(), 12.0, 1e-12);
  EXPECT_NEAR(jt(f64(2.0), zero).item<double>(), std::cos(2.0), 1e-12);
  auto jgg = jit([&](const Tensor& x, const Tensor& i) { return grad([&](const Tensor& v) { return grad(f)(v, i); })(x); });
  EXPECT_NEAR(jgg(f64(2.0), one).item<double>(), 12.0, 1e-12);
  EXPECT_NEAR(jgg(f64(2.0), zero).item<double>(), -std::sin(2.0), 1e-12);
}

// Reverse mode through a while whose counter is an integer carry.
TEST(ControlFlowGrad, WhileWithIntegerCounter) {
  auto f = [](const Tensor& x) {
    auto r = while_loop([](const TensorTree& c) -> Tensor { return c[1].tensor() < int64_t{3}; },
                        [](const TensorTree& c) {
                          return TensorTree(std::vector<TensorTree>{TensorTree(c[0].tensor() * c[0].tensor()),
                                                                    TensorTree(c[1].tensor() + int64_t{1})});
                        },
                        TensorTree(std::vector<TensorTree>{TensorTree(x), TensorTree(scalar_tensor(int64_t{0}, DType::Int64))}));
    return r[0].tensor();  // x^8
  };
  EXPECT_NEAR(grad(f)(f64(1.1)).item<double>(), 8 * std::pow(1.1, 7), 1e-10);
  EXPECT_NEAR(jit([&](const Tensor& x) { return grad(f)(x); })(f64(1.1)).item<double>(), 8 * std::pow(1.1, 7), 1e-10);
}

}  // namespace
}  // namespace spore
