// SPDX-License-Identifier: Apache-2.0
#include "codegen/geometry.h"

#include "backends/cpu/elementwise_loop.h"
#include "spore/error.h"

namespace spore::codegen {

static_assert(kMaxRank == 16, "cpu::memory_order orders up to 16 dims");

bool dense(const Buffer& b) {
  std::array<int, kMaxRank> order{};
  const int n = cpu::memory_order(b, order);
  int64_t expect = 1;
  for (int i = n - 1; i >= 0; --i) {
    const int d = order[static_cast<size_t>(i)];
    if (b.strides[d] != expect) return false;
    expect *= b.shape[d];
  }
  return true;
}

bool same_layout(const Buffer& a, const Buffer& b) {
  if (a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d)
    if (a.shape[d] != b.shape[d] || (a.shape[d] != 1 && a.strides[d] != b.strides[d])) return false;
  return true;
}

Geometry geometry(std::span<const Buffer> in, const Buffer& out) {
  const int nd = out.ndim;
  SPORE_CHECK(nd <= kMaxRank, "[fused] rank ", nd, " is over the loop interpreter's ", kMaxRank);
  std::vector<std::array<int64_t, kMaxRank>> st(in.size());
  for (size_t k = 0; k < in.size(); ++k) {
    const int off = nd - in[k].ndim;
    SPORE_ASSERT(off >= 0, "fused input ", k, " has a higher rank than the output");
    for (int d = 0; d < nd; ++d) {
      const int id = d - off;
      st[k][d] = (id < 0 || in[k].shape[id] == 1) ? 0 : in[k].strides[id];
      SPORE_ASSERT(id < 0 || in[k].shape[id] == 1 || in[k].shape[id] == out.shape[d], "fused input ", k,
                   " does not broadcast to the output");
    }
  }
  // Iterate in the output's memory order (a plan may store it channels-last).
  std::array<int, kMaxRank> order{};
  const int no = cpu::memory_order(out, order);
  SPORE_ASSERT(dense(out), "fused output must be dense in some dim order");
  Geometry g;
  g.strides.resize(in.size());
  int m = 0;
  for (int od = 0; od < no; ++od) {
    const int d = order[static_cast<size_t>(od)];
    bool merge = m > 0;
    for (size_t k = 0; merge && k < in.size(); ++k) merge = g.strides[k][m - 1] == st[k][d] * out.shape[d];
    if (merge) {
      g.shape[m - 1] *= out.shape[d];
      for (size_t k = 0; k < in.size(); ++k) g.strides[k][m - 1] = st[k][d];
      continue;
    }
    g.shape[m] = out.shape[d];
    for (size_t k = 0; k < in.size(); ++k) g.strides[k][m] = st[k][d];
    ++m;
  }
  g.ndim = m;
  return g;
}

}  // namespace spore::codegen
