// SPDX-License-Identifier: Apache-2.0
#pragma once
// Comparing Graph-mode (jit) results with PyNative ones, shared by jit_table_test.cc and
// jit_models_test.cc.
//
// Tolerance table, (PyNative, compiled plan) by optimization level:
//   O0 (interpreter), O1 (plan, unfused): bitwise; the same kernels run in the same order, so
//       reductions combine the same chunks (NaN matches NaN, +0 does not match -0).
//   O2 (plan with fused groups): |jit - eager| / max(1, |eager|) <= kFusedEps epsilons of the
//       dtype. Fused kernels run every lane through the vector routines where the unfused ones
//       run a run's last n % lanes elements through libm (tests/passes/semantics_test.cc, which
//       measured 2.5 eps over the gradient-check table and its gradients).
#include <cmath>
#include <cstring>
#include <stdlib.h>
#include <string>

#include "spore/spore.h"
#include "transforms/jit_stats.h"

namespace spore::testing {

inline constexpr double kFusedEps = 64;

/// The tolerance of the table above, in epsilons (0: bitwise).
inline double jit_tolerance_eps(int level) { return level >= 2 ? kFusedEps : 0; }

/// The difference of `got` from `want`: 0 when bitwise equal (NaN matching NaN), else
/// max |got - want| / max(1, |want|) in epsilons of the dtype; infinite for a different dtype or
/// shape, a different integer, or a NaN/Inf that is not matched.
inline double diff_eps(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) return INFINITY;
  const Tensor a = got.contiguous(), b = want.contiguous();
  const size_t bytes = static_cast<size_t>(a.numel()) * a.itemsize();
  if (bytes == 0 || std::memcmp(a.data_ptr(), b.data_ptr(), bytes) == 0) return 0;
  if (!is_floating(a.dtype())) return INFINITY;
  const double eps = a.dtype() == DType::Float64   ? 0x1p-52
                     : a.dtype() == DType::Float32 ? 0x1p-23
                     : a.dtype() == DType::Float16 ? 0x1p-10
                                                   : 0x1p-7;
  const auto x = a.to(DType::Float64).to_vector<double>(), y = b.to(DType::Float64).to_vector<double>();
  double m = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    if (std::isnan(x[k]) && std::isnan(y[k])) continue;
    if (std::memcmp(&x[k], &y[k], sizeof(double)) == 0) continue;
    if (std::isnan(x[k]) || std::isnan(y[k]) || std::isinf(x[k]) || std::isinf(y[k])) return INFINITY;
    // +0 against -0 is not bitwise; count it as the smallest difference.
    m = std::max(m, std::max(std::fabs(x[k] - y[k]) / std::max(1.0, std::fabs(y[k])) / eps, 1e-300));
  }
  return m;
}

/// Sets SPORE_OPT_LEVEL for a scope (jit reads it on every trace and call); restores it after.
class OptLevelScope {
 public:
  explicit OptLevelScope(int level) {
    if (const char* v = std::getenv("SPORE_OPT_LEVEL")) saved_ = v, had_ = true;
    setenv("SPORE_OPT_LEVEL", std::to_string(level).c_str(), 1);
  }
  ~OptLevelScope() {
    if (had_) setenv("SPORE_OPT_LEVEL", saved_.c_str(), 1);
    else unsetenv("SPORE_OPT_LEVEL");
  }
  OptLevelScope(const OptLevelScope&) = delete;
  OptLevelScope& operator=(const OptLevelScope&) = delete;

 private:
  std::string saved_;
  bool had_ = false;
};

/// Graph mode for a scope.
struct GraphModeScope {
  GraphModeScope() { set_context(Mode::Graph); }
  ~GraphModeScope() { set_context(Mode::PyNative); }
};

/// Counts the plan and interpreter runs of the jit calls made while it lives.
class RunCounter {
 public:
  RunCounter() : start_(transforms::jit_run_stats()) {}
  int64_t plans() const { return transforms::jit_run_stats().plan_runs - start_.plan_runs; }
  int64_t interpreted() const { return transforms::jit_run_stats().interpreted_runs - start_.interpreted_runs; }

 private:
  transforms::JitRunStats start_;
};

}  // namespace spore::testing
