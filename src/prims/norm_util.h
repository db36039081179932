// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers shared by the nn primitive kernels (softmax, norms, losses, embedding, interpolate):
// packing a strided input into a contiguous block, dispatch over the four float dtypes, and
// 16-bit row conversion (16-bit floats compute in float32).
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "backends/cpu/elementwise_loop.h"
#include "core/primitive.h"
#include "prims/strided_copy.h"

namespace spore::prims::nn {

/// A kernel input as one contiguous block: the buffer itself when it already is, else a packed
/// copy (kernels may get any strides; the fast paths then read memory in order).
class Contig {
 public:
  Contig() = default;
  explicit Contig(const Buffer& b) {
    if (b.contiguous()) {
      ptr_ = b.data;
      return;
    }
    const size_t isz = dtype_size(b.dtype);
    copy_.resize(static_cast<size_t>(b.numel()) * isz + 64);
    Strides st = contiguous_strides(Shape(std::span<const Dim>(b.shape, static_cast<size_t>(b.ndim))));
    strided_copy(b, Buffer{copy_.data(), b.dtype, b.ndim, b.shape, st.data()});
    ptr_ = copy_.data();
  }
  template <class T>
  const T* get() const { return static_cast<const T*>(ptr_); }

 private:
  const void* ptr_ = nullptr;
  std::vector<char> copy_;
};

/// The inverse of Contig: copies a contiguous block of `b`'s shape and dtype into `b`'s own
/// (dense) strides, e.g. a channels-last result a kernel computed row-major.
inline void copy_into(const void* contiguous, const Buffer& b) {
  const Strides st = contiguous_strides(Shape(std::span<const Dim>(b.shape, static_cast<size_t>(b.ndim))));
  strided_copy(Buffer{const_cast<void*>(contiguous), b.dtype, b.ndim, b.shape, st.data()}, b);
}

/// Calls f(T{}) for the floating dtypes; other dtypes are an internal error (ops check first).
template <class F>
void visit_float(DType dt, F&& f) {
  switch (dt) {
    case DType::Float32: f(float{}); return;
    case DType::Float64: f(double{}); return;
    case DType::Float16: f(Half{}); return;
    case DType::BFloat16: f(BFloat16{}); return;
    default: SPORE_ASSERT(false, "nn kernel reached with dtype ", dtype_name(dt));
  }
}

template <class T>
inline constexpr bool is_16bit = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

/// n values at `r` in the compute type: `r` itself, or (16-bit floats) converted into `buf`.
template <class T>
const compute_t<T>* compute_row(const T* r, int64_t n, std::vector<compute_t<T>>& buf) {
  if constexpr (is_16bit<T>) {
    cpu::convert_n(r, buf.data(), n);
    return buf.data();
  } else {
    return r;
  }
}

/// A whole small vector (weight, bias) in compute type; empty when `b` is null.
template <class T>
std::vector<compute_t<T>> load_vector(const Buffer* b) {
  std::vector<compute_t<T>> v;
  if (!b) return v;
  Contig c(*b);
  v.resize(static_cast<size_t>(b->numel()));
  cpu::convert_n(c.get<T>(), v.data(), b->numel());
  return v;
}

/// Product of shape[begin, end).
inline int64_t prod(const Buffer& b, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) p *= b.shape[i];
  return p;
}

/// Rows per parallel chunk so one chunk is ~kParallelGrain element-operations.
inline int64_t row_grain(int64_t row_len, int64_t cost = 1) {
  return std::max<int64_t>(1, runtime::kParallelGrain / std::max<int64_t>(1, row_len * cost));
}

}  // namespace spore::prims::nn
