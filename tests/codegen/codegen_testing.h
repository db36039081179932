// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers for the kernel generator's tests: trace a C++ function of tensors to a graph, fill
// tensors with values that include NaN and infinities, compare results bit for bit or in ulps.
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "autodiff/frames.h"
#include "runtime/dispatch.h"
#include "spore/spore.h"
#include "trace_program.h"

namespace spore::codegen::testing {

using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

/// The graph of `f` over inputs of the given tensors' types (every input is a graph input).
inline ir::GraphPtr trace(const Fn& f, const std::vector<Tensor>& inputs) {
  return spore::testing::trace_program(f, inputs).graph;
}

/// A tensor of `shape` with values in [-3, 3], and (when `special`) some NaN, +-Inf, +-0.
inline Tensor random_tensor(const Shape& shape, DType dt, std::mt19937& rng, bool special = true) {
  Tensor t = Tensor::empty(shape, dt);
  std::uniform_real_distribution<double> u(-3, 3);
  std::uniform_int_distribution<int> pick(0, 15);
  const double specials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0};
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    const int c = pick(rng);
    const double v = special && c < 5 ? specials[c] : u(rng);
    if (dt == DType::Float32) t.data<float>()[i] = static_cast<float>(v);
    else t.data<double>()[i] = v;
  }
  return t;
}

/// True when the tensors have one dtype and shape and equal bits (any NaN matches any NaN).
inline bool same_bits(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) return false;
  auto x = got.to(DType::Float64).to_vector<double>(), y = want.to(DType::Float64).to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) && std::isnan(y[i])) continue;
    if (std::memcmp(&x[i], &y[i], sizeof(double)) != 0) return false;
  }
  return true;
}

/// Largest |got - want| / max(1, |want|) in units of the dtype's epsilon: relative error for
/// large values, absolute near zero (where cancellation makes ulps meaningless). NaN against a
/// number, or infinities that differ, count as infinite error.
inline double max_error_eps(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) return INFINITY;
  const double eps = got.dtype() == DType::Float64 ? 0x1p-52 : 0x1p-23;
  auto x = got.to(DType::Float64).to_vector<double>(), y = want.to(DType::Float64).to_vector<double>();
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) && std::isnan(y[i])) continue;
    if (x[i] == y[i]) continue;
    if (std::isnan(x[i]) || std::isnan(y[i]) || std::isinf(x[i]) || std::isinf(y[i])) return INFINITY;
    m = std::max(m, std::fabs(x[i] - y[i]) / std::max(1.0, std::fabs(y[i])) / eps);
  }
  return m;
}

}  // namespace spore::codegen::testing
