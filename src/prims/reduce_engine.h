// SPDX-License-Identifier: Apache-2.0
#pragma once
// The reduction engine shared by the reduction kernels. The input's dims are split into kept
// dims (output order) and reduced dims (sorted by stride so memory is walked in order), each
// group coalesced. The reduced extent R is cut into chunks of a fixed size; each (outputs,
// chunk) work item reduces in a fixed vectorized order and the chunk partials of an output are
// combined sequentially. So results depend on the shape and strides only, never on threads.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "backends/cpu/elementwise_loop.h"
#include "core/primitive.h"
#include "runtime/parallel.h"

namespace spore::prims::reduce_detail {

/// Elements of R per chunk when the reduced run is innermost (fixed: results depend on it).
inline constexpr int64_t kChunk = 8192;
/// Rows per chunk when the innermost dim is kept (outer reduction): short sequential sums.
inline constexpr int64_t kRowChunk = 256;
/// Columns per work item of an outer reduction; gather buffer size of the inner path.
inline constexpr int64_t kCols = 256;
inline constexpr int64_t kBlock = 512;

struct Geometry {
  int nk = 0, nr = 0;
  std::array<int64_t, 16> kshape{}, kstride{}, rshape{}, rstride{};
  int64_t M = 1, R = 1;

  int64_t kept_offset(int64_t o) const {
    int64_t off = 0;
    for (int d = nk - 1; d >= 0; --d) {
      off += (o % kshape[d]) * kstride[d];
      o /= kshape[d];
    }
    return off;
  }
  /// Calls seg(offset, n) for the runs of the innermost reduced dim covering [r0, r1);
  /// a run's elements are rstride[nr - 1] apart.
  template <class F>
  void for_segments(int64_t r0, int64_t r1, F&& seg) const {
    if (nr == 1) {  // one reduced dim: the range is one run (the common case; no divisions)
      seg(r0 * rstride[0], r1 - r0);
      return;
    }
    const int64_t inner = rshape[nr - 1];
    for (int64_t r = r0; r < r1;) {
      int64_t i = r % inner, row = r / inner, off = i * rstride[nr - 1];
      for (int d = nr - 2; d >= 0; --d) {
        off += (row % rshape[d]) * rstride[d];
        row /= rshape[d];
      }
      const int64_t n = std::min(inner - i, r1 - r);
      seg(off, n);
      r += n;
    }
  }
};

/// Splits `in` into kept and reduced dims (`reduced[d]` true for reduced axes) and coalesces.
inline Geometry make_geometry(const Buffer& in, const bool* reduced) {
  Geometry g;
  SPORE_ASSERT(in.ndim <= 16, "reduction rank ", in.ndim, " over 16");
  auto push = [](int& n, auto& shp, auto& str, int64_t s, int64_t st) {
    if (s == 1) return;
    if (n > 0 && shp[n - 1] != 0 && s != 0 && str[n - 1] == st * s) {
      shp[n - 1] *= s;
      str[n - 1] = st;
      return;
    }
    shp[n] = s;
    str[n] = st;
    ++n;
  };
  std::array<int, 16> rd{};
  int nrd = 0;
  for (int d = 0; d < in.ndim; ++d) {
    if (reduced[d]) {
      rd[nrd++] = d;
      g.R *= in.shape[d];
    } else {
      push(g.nk, g.kshape, g.kstride, in.shape[d], in.strides[d]);
      g.M *= in.shape[d];
    }
  }
  // Walk reduced dims in memory order (largest stride outermost) for locality.
  std::stable_sort(rd.begin(), rd.begin() + nrd,
                   [&](int a, int b) { return std::abs(in.strides[a]) > std::abs(in.strides[b]); });
  for (int i = 0; i < nrd; ++i) push(g.nr, g.rshape, g.rstride, in.shape[rd[i]], in.strides[rd[i]]);
  if (g.nr == 0) {  // nothing (or only size-1 dims) reduced: one element per output
    g.rshape[0] = 1;
    g.rstride[0] = 0;
    g.nr = 1;
  }
  return g;
}

/// Converts a storage value to the compute type.
template <class C, class T>
inline C to_compute(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return static_cast<C>(static_cast<float>(v));
  else return static_cast<C>(v);
}

/// Reduces `x` (element type In, compute type C) with kernel op K into acc[0..M), one value per
/// output before finalization. `param` (per output, may be null) is passed to K::map.
template <class K, class In, class C>
void reduce_to_acc(const Geometry& g, const In* x, const typename K::Acc* param, typename K::Acc* acc) {
  using Acc = typename K::Acc;
  const int64_t M = g.M, R = g.R;
  if (M == 0) return;
  if (R == 0) {
    std::fill(acc, acc + M, K::identity());
    return;
  }
  const bool outer = g.nk >= 1 && g.kstride[g.nk - 1] == 1 && g.rstride[g.nr - 1] != 1 && g.kshape[g.nk - 1] >= 8;
  const int64_t chunk = outer ? kRowChunk : kChunk;
  const int64_t nchunks = (R + chunk - 1) / chunk;
  std::unique_ptr<Acc[]> partial_store;  // not a vector: vector<bool> has no data()
  Acc* partial = acc;
  if (nchunks > 1) {
    partial_store.reset(new Acc[static_cast<size_t>(M * nchunks)]);
    partial = partial_store.get();
  }
  if (outer) {
    const int64_t cols = g.kshape[g.nk - 1], mo = M / cols, ncb = (cols + kCols - 1) / kCols;
    Geometry go = g;  // kept dims without the innermost (column) dim
    go.nk -= 1;
    runtime::parallel_items(mo * ncb * nchunks, std::min(R, chunk) * kCols, [&](int64_t item) {
      const int64_t c = item % nchunks, cb = (item / nchunks) % ncb, oo = item / nchunks / ncb;
      const int64_t j0 = cb * kCols, nj = std::min(kCols, cols - j0), o0 = oo * cols + j0;
      const In* base = x + go.kept_offset(oo) + j0;
      alignas(64) Acc a[kCols];
      alignas(64) C buf[kCols];
      std::fill(a, a + nj, K::identity());
      const Acc* p = param ? param + o0 : nullptr;
      g.for_segments(c * chunk, std::min(R, (c + 1) * chunk), [&](int64_t off, int64_t n) {
        const int64_t s = g.rstride[g.nr - 1];
        for (int64_t t = 0; t < n; ++t) {
          const In* row = base + off + t * s;
          if constexpr (std::is_same_v<In, C>) {
            K::rows(a, row, p, nj);
          } else {
            for (int64_t j = 0; j < nj; ++j) buf[j] = to_compute<C>(row[j]);
            K::rows(a, buf, p, nj);
          }
        }
      });
      for (int64_t j = 0; j < nj; ++j) partial[(o0 + j) * nchunks + c] = a[j];
    });
  } else {
    const int64_t per = std::max<int64_t>(1, kChunk / std::min(R, kChunk));  // outputs per item
    const int64_t nob = (M + per - 1) / per;
    runtime::parallel_items(nob * nchunks, per * std::min(R, chunk), [&](int64_t item) {
      const int64_t c = item % nchunks, ob = item / nchunks;
      alignas(64) C buf[kBlock];
      const int64_t s = g.rstride[g.nr - 1];
      for (int64_t o = ob * per; o < std::min(M, (ob + 1) * per); ++o) {
        const In* base = x + g.kept_offset(o);
        const Acc p = param ? param[o] : Acc{};
        Acc a = K::identity();
        g.for_segments(c * chunk, std::min(R, (c + 1) * chunk), [&](int64_t off, int64_t n) {
          const In* src = base + off;
          if constexpr (std::is_same_v<In, C>) {
            if (s == 1) {
              a = K::combine(a, K::block(src, n, p));
              return;
            }
          }
          for (int64_t b = 0; b < n; b += kBlock) {
            const int64_t m = std::min(kBlock, n - b);
            for (int64_t i = 0; i < m; ++i) buf[i] = to_compute<C>(src[(b + i) * s]);
            a = K::combine(a, K::block(buf, m, p));
          }
        });
        partial[o * nchunks + c] = a;
      }
    });
  }
  if (nchunks > 1) {
    runtime::parallel_for(M, std::max<int64_t>(1, runtime::kParallelGrain / nchunks), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const Acc* q = partial + o * nchunks;
        Acc a = q[0];
        for (int64_t c = 1; c < nchunks; ++c) a = K::combine(a, q[c]);
        acc[o] = a;
      }
    });
  }
}

}  // namespace spore::prims::reduce_detail
