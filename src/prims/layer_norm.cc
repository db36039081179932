// SPDX-License-Identifier: Apache-2.0
// Layer norm: each row (the flattened normalized dims) is normalized with a two-pass mean and
// variance while it sits in cache (vec_kernels' layer_norm_f32 for float32, norm_kernels for
// float64); 16-bit rows are widened to float32 first. Rows are spread over threads.
#include "prims/layer_norm.h"

#include <cmath>

#include "backends/cpu/norm_kernels.h"
#include "backends/cpu/vec_kernels.h"
#include "prims/elementwise_infer.h"
#include "prims/norm_decompositions.h"
#include "prims/norm_util.h"

namespace spore::prims {
namespace {

template <class T>
void layer_norm_rows(const T* x, T* y, int64_t rows, int64_t n, const Buffer* wb, const Buffer* bb, double eps,
                     compute_t<T>* mean, compute_t<T>* rstd) {
  using C = compute_t<T>;
  const auto& vk = cpu::vec_kernels();
  const auto& nk = cpu::norm_kernels().f64;
  nn::Contig cw, cb;
  if (wb) cw = nn::Contig(*wb);
  if (bb) cb = nn::Contig(*bb);
  // 16-bit weight and bias are widened once for every row.
  std::vector<float> w16, b16;
  if constexpr (nn::is_16bit<T>) {
    w16 = nn::load_vector<T>(wb);
    b16 = nn::load_vector<T>(bb);
  }
  const C* w = nullptr;
  const C* b = nullptr;
  if constexpr (nn::is_16bit<T>) {
    w = wb ? w16.data() : nullptr;
    b = bb ? b16.data() : nullptr;
  } else {
    w = wb ? cw.get<T>() : nullptr;
    b = bb ? cb.get<T>() : nullptr;
  }
  runtime::parallel_for(rows, nn::row_grain(n, 4), [&](int64_t rb, int64_t re) {
    std::vector<float> buf(nn::is_16bit<T> ? static_cast<size_t>(n) : 0);
    for (int64_t r = rb; r < re; ++r) {
      if constexpr (std::is_same_v<T, float>) {
        vk.layer_norm_f32(x + r * n, y + r * n, n, w, b, static_cast<float>(eps), mean + r, rstd + r);
      } else if constexpr (std::is_same_v<T, double>) {
        const double* xr = x + r * n;
        const double mu = nk.sum(xr, n) / static_cast<double>(n);
        const double rs = 1.0 / std::sqrt(nk.sum_sq_dev(xr, n, mu) / static_cast<double>(n) + eps);
        nk.normalize(xr, y + r * n, n, mu, rs, w, b);
        mean[r] = mu;
        rstd[r] = rs;
      } else {
        cpu::convert_n(x + r * n, buf.data(), n);
        vk.layer_norm_f32(buf.data(), buf.data(), n, w, b, static_cast<float>(eps), mean + r, rstd + r);
        cpu::convert_n(buf.data(), y + r * n, n);
      }
    }
  });
}

void run_layer_norm(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const LayerNormAttrs*>(attrs);
  const Buffer& x = in[0];
  const int ax = static_cast<int>(a.axis);
  const int64_t rows = nn::prod(x, 0, ax), n = nn::prod(x, ax, x.ndim);
  if (rows == 0) return;
  int k = 1;
  const Buffer* wb = a.has_weight ? &in[k++] : nullptr;
  const Buffer* bb = a.has_bias ? &in[k++] : nullptr;
  nn::Contig cx(x);
  nn::visit_float(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    layer_norm_rows<T>(cx.get<T>(), out[0].ptr<T>(), rows, n, wb, bb, a.eps, out[1].ptr<C>(), out[2].ptr<C>());
  });
}

const Primitive& layer_norm_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<LayerNormAttrs> spec;
    spec.name = "layer_norm";
    spec.fusion = FusionClass::Reduction;
    spec.residuals = {0b111u, 0b110u};  // x, weight, bias; mean, rstd
    spec.infer = [](const LayerNormAttrs& a, std::span<const TensorType> in, OutTypes& out) {
      const Shape& s = in[0].shape;
      SPORE_ASSERT(a.axis >= 0 && a.axis <= static_cast<int64_t>(s.size()), "layer_norm axis ", a.axis);
      SPORE_ASSERT(in.size() == 1u + a.has_weight + a.has_bias, "layer_norm inputs ", in.size());
      out.add(in[0].dtype, s);
      Shape stats(s.begin(), s.begin() + a.axis);
      out.add(stats_dtype(in[0].dtype), stats);
      out.add(stats_dtype(in[0].dtype), stats);
    };
    spec.cost = [](const LayerNormAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return elementwise_cost(in.first(1), out.first(1), 8);
    };
    Primitive& q = define_primitive(spec);
    q.decomposition = &decompose_layer_norm;
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu_rows", .run = &run_layer_norm});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (layer_norm_def(), true);

}  // namespace

const Primitive& layer_norm_primitive() { return layer_norm_def(); }

}  // namespace spore::prims
