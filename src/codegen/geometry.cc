// SPDX-License-Identifier: Apache-2.0
#include "codegen/geometry.h"

#include "spore/error.h"

namespace spore::codegen {

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
  Geometry g;
  g.strides.resize(in.size());
  int m = 0;
  for (int d = 0; d < nd; ++d) {
    if (out.shape[d] == 1) continue;
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
