// SPDX-License-Identifier: Apache-2.0
#pragma once
// Vectorized loops of the reduction kernels (src/prims/reduce*.cc), compiled once per
// instruction set (reduce_kernels.isa.cc) and chosen at run time like vec_kernels.h. Every loop
// reduces in an order fixed by `n` alone, so a result never depends on the thread count.
#include <cstdint>

namespace spore::cpu {

/// One table of reduction loops over contiguous runs of float32 / float64.
struct ReduceKernels {
  const char* isa = "";
  /// sum of x[0..n)
  float (*sum_f32)(const float* x, int64_t n);
  double (*sum_f64)(const double* x, int64_t n);
  /// sum of |x|
  float (*sum_abs_f32)(const float* x, int64_t n);
  double (*sum_abs_f64)(const double* x, int64_t n);
  /// sum of (x - m)^2 (variance's second pass; m = 0 gives the 2-norm's sum of squares)
  float (*sum_sqdev_f32)(const float* x, int64_t n, float m);
  double (*sum_sqdev_f64)(const double* x, int64_t n, double m);
  /// sum of exp(x - m) (logsumexp's second pass)
  float (*sum_exp_f32)(const float* x, int64_t n, float m);
  double (*sum_exp_f64)(const double* x, int64_t n, double m);
  /// max / min of x[0..n), n >= 1; NaN if any element is NaN (PyTorch's amax/amin)
  float (*max_f32)(const float* x, int64_t n);
  double (*max_f64)(const double* x, int64_t n);
  float (*min_f32)(const float* x, int64_t n);
  double (*min_f64)(const double* x, int64_t n);
  /// acc[j] += x[j]: one row of a reduction over a non-innermost axis
  void (*add_row_f32)(float* acc, const float* x, int64_t n);
  void (*add_row_f64)(double* acc, const double* x, int64_t n);
  /// acc[j] += (x[j] - m[j])^2 (m null: 0)
  void (*sqdev_row_f32)(float* acc, const float* x, const float* m, int64_t n);
  void (*sqdev_row_f64)(double* acc, const double* x, const double* m, int64_t n);
};

/// The loops for this CPU (AVX-512, AVX2 or baseline), chosen once.
const ReduceKernels& reduce_kernels();

}  // namespace spore::cpu
