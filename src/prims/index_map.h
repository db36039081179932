// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared byte-moving machinery of the data-movement primitives (concat, pad, flip, roll ...):
// they are dtype-agnostic, so kernels move elements by size. An output block is filled by a
// per-axis table that maps each output coordinate to a source offset (in elements) or to "fill";
// a table per axis keeps the inner loop to one add and one load, whatever the mapping is
// (identity, reversal, rotation, reflection, clamping, constant border).
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "core/primitive.h"
#include "prims/elementwise_infer.h"
#include "runtime/parallel.h"

namespace spore::prims {

/// Marks an output coordinate that takes the fill value instead of a source element.
inline constexpr int64_t kFillOffset = std::numeric_limits<int64_t>::min();

/// One table per axis: `tab[d][o]` is the source offset (elements) for output coordinate o of
/// axis d, or kFillOffset.
using AxisTables = std::vector<std::vector<int64_t>>;

/// The identity table of an axis: o * stride.
inline std::vector<int64_t> identity_table(int64_t n, int64_t stride) {
  std::vector<int64_t> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[static_cast<size_t>(i)] = i * stride;
  return t;
}

namespace move_detail {
template <class W>
inline void move_row(const char* src, char* dst, const int64_t* tab, int64_t n, int64_t dst_stride,
                     const char* fill) {
  W f;
  std::memcpy(&f, fill, sizeof(W));
  const W* s = reinterpret_cast<const W*>(src);
  W* d = reinterpret_cast<W*>(dst);
  for (int64_t j = 0; j < n; ++j) {
    W v;
    if (tab[j] == kFillOffset) v = f;
    else std::memcpy(&v, s + tab[j], sizeof(W));
    d[j * dst_stride] = v;
  }
}
/// dst[j * dst_stride] = *value for j in [0, n): a typed loop (one memcpy call per element, with
/// its size known only at run time, is ~10x slower).
template <class W>
inline void fill_row(char* dst, int64_t n, int64_t dst_stride, const char* value) {
  W v;
  std::memcpy(&v, value, sizeof(W));
  W* d = reinterpret_cast<W*>(dst);
  if (dst_stride == 1) std::fill(d, d + n, v);
  else
    for (int64_t j = 0; j < n; ++j) d[j * dst_stride] = v;
}
inline void fill_row(char* dst, int64_t n, int64_t dst_stride, const char* value, size_t esz) {
  switch (esz) {
    case 1: fill_row<uint8_t>(dst, n, dst_stride, value); break;
    case 2: fill_row<uint16_t>(dst, n, dst_stride, value); break;
    case 4: fill_row<uint32_t>(dst, n, dst_stride, value); break;
    case 8: fill_row<uint64_t>(dst, n, dst_stride, value); break;
    default:
      for (int64_t j = 0; j < n; ++j) std::memcpy(dst + j * dst_stride * static_cast<int64_t>(esz), value, esz);
  }
}
}  // namespace move_detail

/// dst[o] = src[sum_d tab[d][o_d]] over the block `shape` (dst strides in elements, any).
/// `fill` points to one element (esz bytes) used where a table says kFillOffset; it may be null
/// when no table does. Rows of the last axis are split across threads.
inline void table_copy(const void* src, void* dst, const int64_t* dst_strides, const Dim* shape, int ndim,
                       size_t esz, const AxisTables& tab, const void* fill) {
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d) n *= shape[d];
  if (n == 0) return;
  alignas(8) char zero[8] = {};
  const char* fillp = fill ? static_cast<const char*>(fill) : zero;
  const char* s = static_cast<const char*>(src);
  char* o = static_cast<char*>(dst);
  if (ndim == 0) {
    std::memcpy(o, s, esz);
    return;
  }
  const int64_t inner = shape[ndim - 1];
  const int64_t rows = n / inner;
  const int64_t* last = tab[static_cast<size_t>(ndim - 1)].data();
  const int64_t ds_last = dst_strides[ndim - 1];
  // A contiguous identity last axis (both sides stride 1) copies whole rows with memcpy.
  bool run = ds_last == 1;
  for (int64_t j = 0; run && j < inner; ++j) run = last[j] == last[0] + j && last[0] != kFillOffset;
  // A broadcast (stride-0) last axis repeats one source element along the row, e.g. the zeros
  // a slice's vjp places its cotangent between.
  bool splat = inner > 1 && last[0] != kFillOffset;
  for (int64_t j = 1; splat && j < inner; ++j) splat = last[j] == last[0];
  runtime::parallel_for(rows, std::max<int64_t>(1, runtime::kParallelGrain / inner), [&](int64_t rb, int64_t re) {
    for (int64_t r = rb; r < re; ++r) {
      int64_t soff = 0, doff = 0, rem = r;
      bool fill_row = false;
      for (int d = ndim - 2; d >= 0; --d) {
        int64_t i = rem % shape[d];
        rem /= shape[d];
        int64_t t = tab[static_cast<size_t>(d)][static_cast<size_t>(i)];
        if (t == kFillOffset) fill_row = true;
        else soff += t;
        doff += i * dst_strides[d];
      }
      char* drow = o + doff * static_cast<int64_t>(esz);
      if (fill_row) {
        move_detail::fill_row(drow, inner, ds_last, fillp, esz);
        continue;
      }
      const char* srow = s + soff * static_cast<int64_t>(esz);
      if (splat) {
        move_detail::fill_row(drow, inner, ds_last, srow + last[0] * static_cast<int64_t>(esz), esz);
        continue;
      }
      if (run) {
        std::memcpy(drow, srow + last[0] * static_cast<int64_t>(esz), static_cast<size_t>(inner) * esz);
        continue;
      }
      switch (esz) {
        case 1: move_detail::move_row<uint8_t>(srow, drow, last, inner, ds_last, fillp); break;
        case 2: move_detail::move_row<uint16_t>(srow, drow, last, inner, ds_last, fillp); break;
        case 4: move_detail::move_row<uint32_t>(srow, drow, last, inner, ds_last, fillp); break;
        default: move_detail::move_row<uint64_t>(srow, drow, last, inner, ds_last, fillp); break;
      }
    }
  });
}

/// Cost of a pure data movement: each output element read once and written once.
inline Cost move_cost(std::span<const TensorType> out) {
  const double n = cost_numel(out[0].shape);
  return Cost{0, 2 * n * static_cast<double>(dtype_size(out[0].dtype))};
}

/// Identity tables for a buffer's own geometry (a plain strided copy).
inline AxisTables identity_tables(const Buffer& b) {
  AxisTables t(static_cast<size_t>(b.ndim));
  for (int d = 0; d < b.ndim; ++d) t[static_cast<size_t>(d)] = identity_table(b.shape[d], b.strides[d]);
  return t;
}

/// One element of `dtype` holding `value` (ints from `ivalue` so int64 stays exact), as bytes.
inline void scalar_bytes(DType dtype, double value, int64_t ivalue, void* out8) {
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T v;
    if constexpr (std::is_same_v<T, bool>) v = value != 0;
    else if constexpr (std::is_integral_v<T>) v = static_cast<T>(ivalue);
    else v = T(static_cast<float>(value));
    if constexpr (std::is_same_v<T, double>) v = value;
    std::memcpy(out8, &v, sizeof(T));
  });
}

/// The index of an int64 index buffer element at flat row-major position `i` (any strides).
inline int64_t strided_offset(const Buffer& b, int64_t i) {
  int64_t off = 0;
  for (int d = b.ndim - 1; d >= 0; --d) {
    off += (i % b.shape[d]) * b.strides[d];
    i /= b.shape[d];
  }
  return off;
}

}  // namespace spore::prims
