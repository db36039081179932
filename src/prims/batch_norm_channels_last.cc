// SPDX-License-Identifier: Apache-2.0
#include "prims/batch_norm_channels_last.h"

#include <cmath>
#include <vector>

#include "backends/cpu/norm_kernels.h"
#include "prims/norm_util.h"
#include "runtime/parallel.h"

namespace spore::prims {
namespace {

constexpr int64_t kRowBlock = 256;  // rows per parallel work item

// Rows [r0, r0 + n) of every (rows, C) operand, in parallel over fixed blocks.
template <class F>
void for_row_blocks(int64_t rows, int64_t C, F&& f) {
  const int64_t nb = (rows + kRowBlock - 1) / kRowBlock;
  runtime::parallel_for(nb, std::max<int64_t>(1, runtime::kParallelGrain / std::max<int64_t>(1, kRowBlock * C)),
                        [&](int64_t b, int64_t e) {
                          for (int64_t k = b; k < e; ++k) f(k * kRowBlock, std::min(kRowBlock, rows - k * kRowBlock));
                        });
}

template <class T>
void bn_typed(const BatchNormAttrs& a, std::span<const Buffer> in, std::span<const Buffer> out) {
  SPORE_ASSERT(!a.training && a.has_running, "channels-last batch_norm runs inference only");
  const Buffer& x = in[0];
  const int64_t C = x.shape[1], rows = x.numel() / C;
  const T* xp = x.ptr<T>();
  T* yp = out[0].ptr<T>();
  T* mean = out[1].ptr<T>();
  T* var = out[2].ptr<T>();
  int k = 1;
  const std::vector<T> w = nn::load_vector<T>(a.has_weight ? &in[k++] : nullptr);
  const std::vector<T> b = nn::load_vector<T>(a.has_bias ? &in[k++] : nullptr);
  const std::vector<T> rm = nn::load_vector<T>(&in[k]), rv = nn::load_vector<T>(&in[k + 1]);
  std::vector<T> scale(static_cast<size_t>(C)), shift(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) {
    const size_t u = static_cast<size_t>(c);
    mean[c] = rm[u], var[c] = rv[u];
    const T invstd = T(1) / std::sqrt(rv[u] + static_cast<T>(a.eps));
    scale[u] = invstd * (w.empty() ? T(1) : w[u]);
    shift[u] = b.empty() ? T(0) : b[u];
  }
  const auto& nk = cpu::norm_rows<T>();
  for_row_blocks(rows, C, [&](int64_t r0, int64_t n) {
    nk.col_scale_shift(xp + r0 * C, yp + r0 * C, n, C, rm.data(), scale.data(), shift.data());
  });
}

}  // namespace

bool stored_channels_last(const Buffer& b) {
  if (b.ndim < 3) return false;
  const Strides want = channels_last_strides(Shape(std::span<const Dim>(b.shape, static_cast<size_t>(b.ndim))));
  for (int d = 0; d < b.ndim; ++d)
    if (b.shape[d] != 1 && b.strides[d] != want[static_cast<size_t>(d)]) return false;
  return true;
}

void batch_norm_channels_last(const BatchNormAttrs& a, std::span<const Buffer> in, std::span<const Buffer> out) {
  if (in[0].dtype == DType::Float64) bn_typed<double>(a, in, out);
  else bn_typed<float>(a, in, out);
}

}  // namespace spore::prims
