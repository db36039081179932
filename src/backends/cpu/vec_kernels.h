// SPDX-License-Identifier: Apache-2.0
#pragma once
// Vectorized inner loops over contiguous float32/float64 runs, compiled once per instruction
// set (vec_kernels.isa.cc built for base x86-64, AVX2+FMA and AVX-512) and chosen at run time
// from the CPU's features. Kernels call these on contiguous chunks; the elementwise loop
// (elementwise_loop.h) handles strides and broadcasting around them.
#include <cstdint>

#include "backends/cpu/binary_math.h"
#include "backends/cpu/unary_math.h"

namespace spore::cpu {

template <class T>
using UnaryLoop = void (*)(const T* x, T* y, int64_t n, const UnaryParams& p);
template <class T>
using BinaryLoop = void (*)(const T* a, const T* b, T* y, int64_t n);
/// a is one value broadcast over b (or b over a when `scalar_b`).
template <class T>
using BinaryScalarLoop = void (*)(T a, const T* b, T* y, int64_t n, bool scalar_b);

struct VecKernels {
  const char* isa = "";
  UnaryLoop<float> unary_f32[kNumUnaryOps];
  UnaryLoop<double> unary_f64[kNumUnaryOps];
  BinaryLoop<float> binary_f32[kNumBinaryOps];
  BinaryLoop<double> binary_f64[kNumBinaryOps];
  BinaryScalarLoop<float> binary_scalar_f32[kNumBinaryOps];
  BinaryScalarLoop<double> binary_scalar_f64[kNumBinaryOps];
  /// y = sum of x[0..n) in float64-free fixed order: pairwise over vector lanes.
  float (*sum_f32)(const float* x, int64_t n);
  double (*sum_f64)(const double* x, int64_t n);
  float (*max_f32)(const float* x, int64_t n);
  /// Row kernels for softmax / log_softmax over contiguous rows of length n.
  void (*softmax_f32)(const float* x, float* y, int64_t n, bool log);
  void (*softmax_f64)(const double* x, double* y, int64_t n, bool log);
  /// Layer norm of one row: y = (x - mean) * rstd * w + b (w, b may be null); returns mean, rstd.
  void (*layer_norm_f32)(const float* x, float* y, int64_t n, const float* w, const float* b, float eps,
                         float* mean, float* rstd);
};

/// The kernels for this CPU (AVX-512, AVX2 or baseline), chosen once.
const VecKernels& vec_kernels();

}  // namespace spore::cpu
