// SPDX-License-Identifier: Apache-2.0
#pragma once
// Vectorized row kernels for the normalization primitives (layer, group, RMS and batch norm),
// compiled once per instruction set (norm_kernels.isa.cc) and chosen at run time like
// vec_kernels.h. Every reduction uses a fixed order that depends only on the row length, so
// results never depend on the thread count.
#include <cstdint>
#include <type_traits>

namespace spore::cpu {

/// Kernels for one floating type T (float or double). All pointers address contiguous rows.
template <class T>
struct NormRowKernels {
  /// Sum of x[0..n).
  T (*sum)(const T* x, int64_t n);
  /// Sum of (x[i] - c)^2: the second pass of a two-pass variance (c = mean), or the sum of
  /// squares (c = 0) for RMS norm.
  T (*sum_sq_dev)(const T* x, int64_t n, T c);
  /// y = (x - mean) * rstd, then times w and plus b where given (w, b may be null).
  void (*normalize)(const T* x, T* y, int64_t n, T mean, T rstd, const T* w, const T* b);
  /// y = (x - m) * a + c with scalars (the per-channel affine of group and batch norm;
  /// subtracting the mean first keeps outputs of near-constant groups exact).
  void (*scale_shift)(const T* x, T* y, int64_t n, T m, T a, T c);
  /// Sum of g[i] * (x[i] - c): batch norm's backward reduction (c = mean).
  T (*sum_dot_dev)(const T* g, const T* x, int64_t n, T c);
  /// y = a * g + b * (x - c) + d with scalars: batch norm's input gradient from its per-channel
  /// sums (g = dy, c = mean).
  void (*axpby_dev)(const T* g, const T* x, T* y, int64_t n, T a, T b, T c, T d);
  /// Channels-last inference batch norm: `rows` rows of C contiguous channels (x is
  /// (N*H*W, C)), y[r, c] = (x[r, c] - m[c]) * a[c] + d[c].
  void (*col_scale_shift)(const T* x, T* y, int64_t rows, int64_t C, const T* m, const T* a, const T* d);
  /// softmax (or log_softmax) of `rows` contiguous rows of length n, three passes per row while
  /// it sits in cache (max; exp and sum into a private buffer; scale). With `stream` the final
  /// pass uses non-temporal stores: for outputs larger than the caches this saves the read for
  /// ownership of y (~1/3 of the memory traffic).
  void (*softmax_rows)(const T* x, T* y, int64_t rows, int64_t n, bool log, bool stream);
};

struct NormKernels {
  const char* isa = "";
  NormRowKernels<float> f32;
  NormRowKernels<double> f64;
};

/// The kernels for this CPU (AVX-512, AVX2 or baseline), chosen once.
const NormKernels& norm_kernels();

/// This CPU's row kernels of float or double.
template <class T>
const NormRowKernels<T>& norm_rows() {
  if constexpr (std::is_same_v<T, double>) return norm_kernels().f64;
  else return norm_kernels().f32;
}

}  // namespace spore::cpu
