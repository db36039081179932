// SPDX-License-Identifier: Apache-2.0
// Gradient checks generated from the case table (grad_cases.h): reverse and forward mode
// against central finite differences in float64.
#include <gtest/gtest.h>

#include <cmath>

#include "autodiff/grad_cases.h"

namespace spore::gradcheck {
namespace {

using namespace ops;

// Inputs with one position replaced (the others kept as given).
std::vector<Tensor> with_input(const std::vector<Tensor>& xs, size_t i, const Tensor& v) {
  auto out = xs;
  out[i] = v;
  return out;
}

std::vector<int> positions(const GradCase& c) {
  if (!c.wrt.empty()) return c.wrt;
  std::vector<int> p;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (is_floating(c.inputs[i].dtype())) p.push_back(static_cast<int>(i));
  return p;
}

// Central difference of L(x) = sum(fn(x) * w) along direction d of input i.
double fd_directional(const GradCase& c, size_t i, const Tensor& w, const Tensor& d) {
  const double h = 1e-6;
  auto L = [&](double s) {
    Tensor xi = c.inputs[i] + d * s;
    return sum(c.fn(with_input(c.inputs, i, xi)) * w).item<double>();
  };
  return (L(h) - L(-h)) / (2 * h);
}

void expect_close(double got, double want, double rtol, const std::string& what) {
  const double tol = rtol * std::max(1.0, std::abs(want)) + 1e-9;
  EXPECT_NEAR(got, want, tol * 100) << what;  // FD step error dominates; rtol is per unit scale
}

TEST(GradCheck, FirstOrderAgainstFiniteDifferences) {
  const auto& cases = all_cases();
  ASSERT_FALSE(cases.empty());
  for (const GradCase& c : cases) {
    if (c.order < 1) continue;
    SCOPED_TRACE(c.name);
    Tensor y = c.fn(c.inputs);
    Tensor w = oracle::rand_tensor(y.shape(), DType::Float64, 99);
    for (int i : positions(c)) {
      Tensor d = oracle::rand_tensor(c.inputs[i].shape(), DType::Float64, 7 + i);
      const double fd = fd_directional(c, i, w, d);
      // Reverse: <dL/dx_i, d>.
      auto L = [&](const Tensor& xi) { return sum(c.fn(with_input(c.inputs, i, xi)) * w); };
      Tensor g = grad(L)(c.inputs[i]);
      expect_close(sum(g * d).item<double>(), fd, c.fd_rtol, "reverse mode, input " + std::to_string(i));
      // Forward: <w, J d>.
      auto [out, t] = jvp([&](const Tensor& xi) { return c.fn(with_input(c.inputs, i, xi)); }, c.inputs[i], d);
      expect_close(sum(t * w).item<double>(), fd, c.fd_rtol, "forward mode, input " + std::to_string(i));
    }
  }
}

}  // namespace
}  // namespace spore::gradcheck
