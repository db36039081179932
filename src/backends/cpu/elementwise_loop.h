// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs an elementwise computation over inputs of any strides, broadcast against a dense output
// (contiguous, or contiguous in another dim order such as channels-last: iterated in its memory
// order). The computation only ever sees contiguous runs: `chunk(in_ptrs, out_ptr, n)` gets
// pointers to n consecutive elements of each input (gathered into a small buffer when an input
// is strided or broadcast) and of the output. Dimensions are coalesced first, so a contiguous
// or simply broadcast case is one long run.
#include <array>
#include <utility>
#include <cstring>
#include <limits>
#include <type_traits>
#include <span>

#include "core/primitive.h"
#include "runtime/parallel.h"

namespace spore::cpu {

inline constexpr int64_t kElementwiseBlock = 512;

template <int NIn>
struct ElementwiseGeometry {
  int ndim = 0;
  std::array<int64_t, 16> shape{};
  std::array<std::array<int64_t, 16>, NIn + 1> strides{};  // [0] = output, then inputs (elements)
};

/// The dims of `b` that are not size 1, by decreasing stride (stable): its memory order, the
/// identity for a contiguous buffer. Returns how many. Elementwise kernels (these loops and the
/// generated ones, codegen/geometry.h) iterate in their output's memory order, so a dense output
/// in any layout -- a plan's channels-last value -- is written in contiguous runs.
inline int memory_order(const Buffer& b, std::array<int, 16>& order) {
  int n = 0;
  for (int d = 0; d < b.ndim && d < 16; ++d)
    if (b.shape[d] != 1) order[static_cast<size_t>(n++)] = d;
  for (int i = 1; i < n; ++i)  // insertion sort: ranks are tiny
    for (int j = i; j > 0 && b.strides[order[static_cast<size_t>(j - 1)]] < b.strides[order[static_cast<size_t>(j)]]; --j)
      std::swap(order[static_cast<size_t>(j - 1)], order[static_cast<size_t>(j)]);
  return n;
}

/// Aligns input strides to the output shape (0 on broadcast dims) and merges dims that are
/// contiguous for every operand, in the output's memory order.
template <int NIn>
ElementwiseGeometry<NIn> elementwise_geometry(std::span<const Buffer> in, const Buffer& out) {
  ElementwiseGeometry<NIn> g;
  int nd = out.ndim;
  SPORE_ASSERT(nd <= 16, "elementwise rank ", nd, " over 16");
  // Right-aligned broadcasting strides.
  std::array<std::array<int64_t, 16>, NIn + 1> st{};
  for (int d = 0; d < nd; ++d) st[0][d] = out.strides[d];
  for (int k = 0; k < NIn; ++k) {
    int off = nd - in[k].ndim;
    for (int d = 0; d < nd; ++d) {
      int id = d - off;
      st[k + 1][d] = (id < 0 || in[k].shape[id] == 1) ? 0 : in[k].strides[id];
    }
  }
  std::array<int, 16> order{};
  const int no = memory_order(out, order);
  // Drop size-1 dims and merge (d, d+1) when every operand has stride[d] == stride[d+1]*shape[d+1].
  int m = 0;
  for (int od = 0; od < no; ++od) {
    const int d = order[static_cast<size_t>(od)];
    if (m > 0) {
      bool merge = true;
      for (int k = 0; k <= NIn; ++k)
        if (g.strides[k][m - 1] != st[k][d] * out.shape[d]) merge = false;
      if (merge) {
        g.shape[m - 1] *= out.shape[d];
        for (int k = 0; k <= NIn; ++k) g.strides[k][m - 1] = st[k][d];
        continue;
      }
    }
    g.shape[m] = out.shape[d];
    for (int k = 0; k <= NIn; ++k) g.strides[k][m] = st[k][d];
    ++m;
  }
  g.ndim = m;
  return g;
}

/// Copies `len` elements of `isz` bytes, `s` elements apart (s == 0: one value repeated), into
/// the contiguous block `dst`. Typed by element size so it compiles to plain loads and stores
/// (a memcpy call per element was ~15x slower on broadcast operands).
inline void gather_block(char* dst, const char* src, int64_t s, int64_t len, size_t isz) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    T* d = reinterpret_cast<T*>(dst);
    T v;
    if (s == 0) {
      std::memcpy(&v, src, sizeof(T));
      for (int64_t j = 0; j < len; ++j) d[j] = v;
    } else {
      for (int64_t j = 0; j < len; ++j) {
        std::memcpy(&v, src + j * s * static_cast<int64_t>(sizeof(T)), sizeof(T));
        d[j] = v;
      }
    }
  };
  switch (isz) {
    case 1: run(uint8_t{}); break;
    case 2: run(uint16_t{}); break;
    case 4: run(uint32_t{}); break;
    default: run(uint64_t{}); break;
  }
}

/// `chunk(const char* const* in, char* out, int64_t n)` on contiguous runs (see file comment).
/// `cost` is a rough per-element cost multiplier for the parallel threshold.
template <int NIn, class Chunk>
void elementwise_loop(std::span<const Buffer> in, const Buffer& out, Chunk&& chunk, int64_t cost = 1) {
  const int64_t n = out.numel();
  if (n == 0) return;
  std::array<size_t, NIn> isz{};
  for (int k = 0; k < NIn; ++k) isz[k] = dtype_size(in[k].dtype);
  const size_t osz = dtype_size(out.dtype);
  auto g = elementwise_geometry<NIn>(in, out);

  // Fast path: one contiguous run for every operand.
  bool flat = g.ndim <= 1 && (g.ndim == 0 || g.strides[0][0] == 1);
  for (int k = 0; flat && k < NIn; ++k) flat = g.ndim == 0 || g.strides[k + 1][0] == 1;
  if (flat) {
    runtime::parallel_for(n, runtime::kParallelGrain / cost, [&](int64_t b, int64_t e) {
      std::array<const char*, NIn> ip;
      for (int k = 0; k < NIn; ++k) ip[k] = static_cast<const char*>(in[k].data) + b * isz[k];
      chunk(ip.data(), static_cast<char*>(out.data) + b * osz, e - b);
    });
    return;
  }

  // General path: rows of the innermost coalesced dim, in blocks.
  const int nd = g.ndim;
  const int64_t inner = g.shape[nd - 1];
  const int64_t rows = n / inner;
  runtime::parallel_for(rows, std::max<int64_t>(1, runtime::kParallelGrain / cost / inner), [&](int64_t rb, int64_t re) {
    alignas(64) char tmp[NIn][kElementwiseBlock * 8];
    // A repeated operand (stride 0 along the row) keeps its block between rows while its value
    // does not change: a broadcast scalar is filled once per thread, not once per row.
    std::array<const char*, NIn> filled{};
    std::array<int64_t, NIn> filled_len{};
    for (int64_t r = rb; r < re; ++r) {
      // Offsets of row r for each operand.
      std::array<int64_t, NIn + 1> off{};
      int64_t rem = r;
      for (int d = nd - 2; d >= 0; --d) {
        int64_t idx = rem % g.shape[d];
        rem /= g.shape[d];
        for (int k = 0; k <= NIn; ++k) off[k] += idx * g.strides[k][d];
      }
      for (int64_t c = 0; c < inner; c += kElementwiseBlock) {
        int64_t len = std::min(kElementwiseBlock, inner - c);
        std::array<const char*, NIn> ip;
        for (int k = 0; k < NIn; ++k) {
          const int64_t s = g.strides[k + 1][nd - 1];
          const char* base = static_cast<const char*>(in[k].data) + (off[k + 1] + c * s) * static_cast<int64_t>(isz[k]);
          if (s == 1) {
            ip[k] = base;
          } else if (s == 0) {
            if (filled[k] != base || filled_len[k] < len) {
              gather_block(tmp[k], base, 0, len, isz[k]);
              filled[k] = base;
              filled_len[k] = len;
            }
            ip[k] = tmp[k];
          } else {
            gather_block(tmp[k], base, s, len, isz[k]);
            filled[k] = nullptr;
            ip[k] = tmp[k];
          }
        }
        const int64_t so = g.strides[0][nd - 1];
        SPORE_ASSERT(so == 1, "elementwise output must be contiguous");
        chunk(ip.data(), static_cast<char*>(out.data) + (off[0] + c) * static_cast<int64_t>(osz), len);
      }
    }
  });
}

/// Float to integer as x86's truncating conversions do (what PyTorch gives here): NaN and
/// out-of-range values become the minimum of int32 (targets up to 32 bits) or int64, then wrap
/// to the target's width (defined in C++20) -- never undefined behaviour.
template <class D>
inline D float_to_int(double v) {
  if constexpr (sizeof(D) <= 4) {
    const int32_t w = (v > -2147483649.0 && v < 2147483648.0) ? static_cast<int32_t>(v) : INT32_MIN;
    return static_cast<D>(w);
  } else {
    const int64_t w = (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? static_cast<int64_t>(v) : INT64_MIN;
    return static_cast<D>(w);
  }
}

/// Converts n values between storage types (16-bit floats through float32).
template <class D, class S>
inline void convert_n(const S* s, D* d, int64_t n) {
  constexpr bool s_half = std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>;
  constexpr bool d_half = std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>;
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<D, bool>) {
      if constexpr (s_half) d[i] = static_cast<float>(s[i]) != 0.0f;
      else d[i] = s[i] != S(0);
    } else if constexpr (std::is_integral_v<D> && (s_half || std::is_floating_point_v<S>)) {
      d[i] = float_to_int<D>(static_cast<double>(static_cast<compute_t<S>>(s[i])));
    } else if constexpr (s_half) {
      d[i] = static_cast<D>(static_cast<float>(s[i]));
    } else if constexpr (d_half) {
      d[i] = D(static_cast<float>(s[i]));
    } else {
      d[i] = static_cast<D>(s[i]);
    }
  }
}

}  // namespace spore::cpu
