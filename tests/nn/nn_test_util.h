// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared checks for the nn tests: gradients with respect to a cell's parameters (value_and_grad
// + functional_call) against central finite differences in float64.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "spore/nn.h"
#include "spore/spore.h"

namespace spore::nn::testing {

/// For each parameter p: <dL/dp, d> from value_and_grad equals (L(p + h d) - L(p - h d)) / 2h
/// along a random direction d. `loss` reads the cell's (swapped) parameters.
inline void expect_param_grads_match_fd(Cell& cell, const std::function<Tensor()>& loss, double rtol = 1e-6) {
  const TensorTree p = cell.parameter_tree();
  auto vg = value_and_grad([&](const TensorTree& t) { return functional_call(cell, t, loss); });
  auto [value, g] = vg(p);
  const double v0 = loss().item<double>();
  EXPECT_NEAR(value.item<double>(), v0, 1e-12 * (1 + std::abs(v0))) << cell.type_name();
  const auto leaves = p.leaves(), grads = g.leaves();
  ASSERT_EQ(leaves.size(), grads.size());
  const auto names = cell.named_parameters();
  for (size_t i = 0; i < leaves.size(); ++i) {
    const Tensor d = ops::normal(leaves[i].shape(), 0, 1, {DType::Float64});
    const double h = 1e-6;
    auto at = [&](double s) {
      std::vector<Tensor> moved = leaves;
      moved[i] = leaves[i] + d * s;
      return functional_call(cell, p.with_leaves(moved), loss).item<double>();
    };
    const double fd = (at(h) - at(-h)) / (2 * h);
    const double an = ops::sum(grads[i] * d).item<double>();
    EXPECT_NEAR(an, fd, rtol * (1 + std::abs(fd)) + 1e-7) << cell.type_name() << " parameter " << names[i].first;
  }
}

/// The same for the gradient with respect to an input tensor x of `f`.
inline void expect_input_grad_matches_fd(const std::function<Tensor(const Tensor&)>& f, const Tensor& x,
                                         double rtol = 1e-6) {
  const Tensor g = grad(f)(x);
  const Tensor d = ops::normal(x.shape(), 0, 1, {DType::Float64});
  const double h = 1e-6;
  const double fd = (f(x + d * h).item<double>() - f(x - d * h).item<double>()) / (2 * h);
  const double an = ops::sum(g * d).item<double>();
  EXPECT_NEAR(an, fd, rtol * (1 + std::abs(fd)) + 1e-7);
}

inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  return ops::amax(ops::abs(a.to(DType::Float64) - b.to(DType::Float64))).item<double>();
}

}  // namespace spore::nn::testing
