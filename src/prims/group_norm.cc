// SPDX-License-Identifier: Apache-2.0
// Group norm: each (sample, group) block is contiguous, so its mean and variance are two
// vectorized passes over one run; the output is then a per-channel (x - mean) * a + b with a = rstd * w. 16-bit blocks are widened to float32 once.
#include "prims/group_norm.h"

#include <cmath>

#include "backends/cpu/norm_kernels.h"
#include "prims/elementwise_infer.h"
#include "prims/norm_decompositions.h"
#include "prims/layer_norm.h"
#include "prims/norm_util.h"

namespace spore::prims {
namespace {

template <class T>
void group_norm_typed(const GroupNormAttrs& a, const T* x, T* y, int64_t N, int64_t C, int64_t HW,
                      const Buffer* wb, const Buffer* bb, compute_t<T>* mean, compute_t<T>* rstd) {
  using Cm = compute_t<T>;
  const auto& nk = cpu::norm_rows<Cm>();
  const std::vector<Cm> w = nn::load_vector<T>(wb), b = nn::load_vector<T>(bb);
  const int64_t G = a.groups, Cg = C / G, len = Cg * HW;
  runtime::parallel_for(N * G, nn::row_grain(len, 4), [&](int64_t ib, int64_t ie) {
    std::vector<Cm> buf(nn::is_16bit<T> ? static_cast<size_t>(len) : 0);
    for (int64_t i = ib; i < ie; ++i) {
      const T* xg = x + i * len;
      T* yg = y + i * len;
      const Cm* src;
      Cm* dst;
      if constexpr (nn::is_16bit<T>) {
        cpu::convert_n(xg, buf.data(), len);
        src = dst = buf.data();
      } else {
        src = xg;
        dst = yg;
      }
      const Cm mu = nk.sum(src, len) / static_cast<Cm>(len);
      const Cm rs = Cm(1) / std::sqrt(nk.sum_sq_dev(src, len, mu) / static_cast<Cm>(len) + static_cast<Cm>(a.eps));
      mean[i] = mu;
      rstd[i] = rs;
      const int64_t g = i % G;
      for (int64_t k = 0; k < Cg; ++k) {
        const int64_t c = g * Cg + k;
        const Cm sc = rs * (w.empty() ? Cm(1) : w[c]);
        nk.scale_shift(src + k * HW, dst + k * HW, HW, mu, sc, b.empty() ? Cm(0) : b[c]);
      }
      if constexpr (nn::is_16bit<T>) cpu::convert_n(buf.data(), yg, len);
    }
  });
}

void run_group_norm(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const GroupNormAttrs*>(attrs);
  const Buffer& x = in[0];
  const int64_t N = x.shape[0], C = x.shape[1], HW = nn::prod(x, 2, x.ndim);
  if (N * C == 0) return;
  int k = 1;
  const Buffer* wb = a.has_weight ? &in[k++] : nullptr;
  const Buffer* bb = a.has_bias ? &in[k++] : nullptr;
  nn::Contig cx(x);
  nn::visit_float(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    using Cm = compute_t<T>;
    group_norm_typed<T>(a, cx.get<T>(), out[0].ptr<T>(), N, C, HW, wb, bb, out[1].ptr<Cm>(), out[2].ptr<Cm>());
  });
}

const Primitive& group_norm_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<GroupNormAttrs> spec;
    spec.name = "group_norm";
    spec.fusion = FusionClass::Reduction;
    spec.residuals = {0b111u, 0b110u};
    spec.infer = [](const GroupNormAttrs& a, std::span<const TensorType> in, OutTypes& out) {
      const Shape& s = in[0].shape;
      SPORE_ASSERT(s.size() >= 2 && a.groups > 0, "group_norm rank ", s.size());
      out.add(in[0].dtype, s);
      out.add(stats_dtype(in[0].dtype), Shape{s[0], a.groups});
      out.add(stats_dtype(in[0].dtype), Shape{s[0], a.groups});
    };
    spec.cost = [](const GroupNormAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return elementwise_cost(in.first(1), out.first(1), 8);
    };
    Primitive& q = define_primitive(spec);
    q.decomposition = &decompose_group_norm;
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu_rows", .run = &run_group_norm});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (group_norm_def(), true);

}  // namespace

const Primitive& group_norm_primitive() { return group_norm_def(); }

}  // namespace spore::prims
