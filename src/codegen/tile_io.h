// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the loop interpreters share (loop_interpreter.cc for elementwise programs,
// row_interpreter.cc for row programs): reading an input's elements of a flat index range of the
// iteration space into a tile, and running one register instruction over a tile.
#include <algorithm>
#include <array>
#include <cstring>

#include "codegen/geometry.h"
#include "codegen/loop_program.h"
#include "codegen/tile_ops.h"

namespace spore::codegen::detail {

template <class T>
T element(const char* p, DType dt) {
  if (dt == DType::Bool) return *reinterpret_cast<const uint8_t*>(p) != 0 ? T(1) : T(0);
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

/// Element offset in input k of flat iteration index `i`, and its multi-index.
inline int64_t offset(const Geometry& g, size_t k, std::array<int64_t, kMaxRank>& idx, int64_t i) {
  int64_t off = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    idx[d] = i % g.shape[d];
    i /= g.shape[d];
    off += idx[d] * g.strides[k][d];
  }
  return off;
}

/// Copies `len` elements of input k (buffer b) from flat index `start` into dst, bools as 0/1.
template <class T>
void gather(const Geometry& g, size_t k, const Buffer& b, int64_t start, int64_t len, T* dst) {
  const char* base = static_cast<const char*>(b.data);
  const int64_t isz = static_cast<int64_t>(dtype_size(b.dtype));
  if (g.ndim == 0) {
    std::fill(dst, dst + len, element<T>(base, b.dtype));
    return;
  }
  std::array<int64_t, kMaxRank> idx{};
  const int nd = g.ndim;
  const int64_t inner = g.shape[nd - 1], s = g.strides[k][nd - 1];
  int64_t off = offset(g, k, idx, start);
  for (int64_t pos = 0; pos < len;) {
    const int64_t seg = std::min(inner - idx[nd - 1], len - pos);
    const char* src = base + off * isz;
    if (s == 0) {
      std::fill(dst + pos, dst + pos + seg, element<T>(src, b.dtype));
    } else if (s == 1 && b.dtype != DType::Bool) {
      std::memcpy(dst + pos, src, static_cast<size_t>(seg) * sizeof(T));
    } else {
      for (int64_t j = 0; j < seg; ++j) dst[pos + j] = element<T>(src + j * s * isz, b.dtype);
    }
    pos += seg;
    // Next row: carry the multi-index and recompute the offset.
    off += seg * s;
    idx[nd - 1] += seg;
    for (int d = nd - 1; d > 0 && idx[d] == g.shape[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
    if (idx[nd - 1] == 0) {
      off = 0;
      for (int d = 0; d < nd; ++d) off += idx[d] * g.strides[k][d];
    }
  }
}

/// Runs arithmetic instruction i (Unary through Lerp) over n elements (whole vectors) into dst.
template <class T>
void run_op(const TileOps<T>& ops, const Instr& i, const std::vector<const T*>& rp, T* dst, int64_t n) {
  switch (i.kind) {
    case InstrKind::Unary: ops.unary[i.code](rp[i.a], dst, n, cpu::UnaryParams{i.pa, i.pb}); break;
    case InstrKind::Binary: ops.binary[i.code](rp[i.a], rp[i.b], dst, n); break;
    case InstrKind::Compare: ops.compare[i.code](rp[i.a], rp[i.b], dst, n); break;
    case InstrKind::Logical: ops.logical[i.code](rp[i.a], rp[i.b], dst, n); break;
    case InstrKind::Predicate: ops.predicate[i.code](rp[i.a], dst, n); break;
    case InstrKind::Where: ops.where(rp[i.a], rp[i.b], rp[i.c], dst, n); break;
    case InstrKind::Clamp: ops.clamp(rp[i.a], rp[i.b], rp[i.c], dst, n); break;
    case InstrKind::Lerp: ops.lerp(rp[i.a], rp[i.b], rp[i.c], dst, n); break;
    default: break;
  }
}

template <class T>
const TileOps<T>& tile_ops_for() {
  if constexpr (std::is_same_v<T, float>) return tile_kernels().f32;
  else return tile_kernels().f64;
}

}  // namespace spore::codegen::detail
