// SPDX-License-Identifier: Apache-2.0
// RMS norm: per row, one vectorized sum of squares, then y = x * rstd [* w]. 16-bit rows are
// widened to float32 and rounded once at the end.
#include "prims/rms_norm.h"

#include <cmath>

#include "backends/cpu/norm_kernels.h"
#include "prims/elementwise_infer.h"
#include "prims/norm_decompositions.h"
#include "prims/layer_norm.h"
#include "prims/norm_util.h"

namespace spore::prims {
namespace {

template <class T>
void rms_rows(const T* x, T* y, int64_t rows, int64_t n, const Buffer* wb, double eps, compute_t<T>* rstd) {
  using Cm = compute_t<T>;
  const auto& nk = cpu::norm_rows<Cm>();
  const std::vector<Cm> wv = nn::load_vector<T>(wb);
  const Cm* w = wv.empty() ? nullptr : wv.data();
  runtime::parallel_for(rows, nn::row_grain(n, 3), [&](int64_t rb, int64_t re) {
    std::vector<Cm> buf(nn::is_16bit<T> ? static_cast<size_t>(n) : 0);
    for (int64_t r = rb; r < re; ++r) {
      const Cm* src;
      Cm* dst;
      if constexpr (nn::is_16bit<T>) {
        cpu::convert_n(x + r * n, buf.data(), n);
        src = dst = buf.data();
      } else {
        src = x + r * n;
        dst = y + r * n;
      }
      const Cm rs = Cm(1) / std::sqrt(nk.sum_sq_dev(src, n, Cm(0)) / static_cast<Cm>(n) + static_cast<Cm>(eps));
      rstd[r] = rs;
      nk.normalize(src, dst, n, Cm(0), rs, w, nullptr);
      if constexpr (nn::is_16bit<T>) cpu::convert_n(buf.data(), y + r * n, n);
    }
  });
}

void run_rms_norm(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const RmsNormAttrs*>(attrs);
  const Buffer& x = in[0];
  const int ax = static_cast<int>(a.axis);
  const int64_t rows = nn::prod(x, 0, ax), n = nn::prod(x, ax, x.ndim);
  if (rows == 0) return;
  nn::Contig cx(x);
  nn::visit_float(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    rms_rows<T>(cx.get<T>(), out[0].ptr<T>(), rows, n, a.has_weight ? &in[1] : nullptr, a.eps,
                out[1].ptr<compute_t<T>>());
  });
}

const Primitive& rms_norm_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<RmsNormAttrs> spec;
    spec.name = "rms_norm";
    spec.fusion = FusionClass::Reduction;
    spec.residuals = {0b11u, 0b10u};
    spec.infer = [](const RmsNormAttrs& a, std::span<const TensorType> in, OutTypes& out) {
      const Shape& s = in[0].shape;
      SPORE_ASSERT(a.axis >= 0 && a.axis <= static_cast<int64_t>(s.size()), "rms_norm axis ", a.axis);
      out.add(in[0].dtype, s);
      out.add(stats_dtype(in[0].dtype), Shape(s.begin(), s.begin() + a.axis));
    };
    spec.cost = [](const RmsNormAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return elementwise_cost(in.first(1), out.first(1), 4);
    };
    Primitive& q = define_primitive(spec);
    q.decomposition = &decompose_rms_norm;
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu_rows", .run = &run_rms_norm});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (rms_norm_def(), true);

}  // namespace

const Primitive& rms_norm_primitive() { return rms_norm_def(); }

}  // namespace spore::prims
