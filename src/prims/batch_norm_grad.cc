// SPDX-License-Identifier: Apache-2.0
// batch_norm_grad's kernel. Per channel: the sums of dy and of dy * (x - mean) over the N rows
// of HW contiguous values (row sums in the compute type, combined across rows in float64 in
// row order, so the result is independent of threads, as batch_norm's statistics are); then
// every row of dx = w * rstd * (dy - mean(dy) - xhat * mean(dy * xhat)), one fused pass while
// the channel's rows are still in cache.
#include "prims/batch_norm_grad.h"

#include <cmath>

#include "backends/cpu/norm_kernels.h"
#include "prims/elementwise_infer.h"
#include "prims/layer_norm.h"
#include "prims/norm_decompositions.h"
#include "prims/norm_util.h"
#include "runtime/parallel.h"

namespace spore::prims {
namespace {

template <class T>
void batch_norm_grad_typed(const BatchNormGradAttrs& a, const T* dy, const T* x, const compute_t<T>* mean,
                           const compute_t<T>* var, const std::vector<compute_t<T>>& w, T* dx, compute_t<T>* dw,
                           compute_t<T>* db, int64_t N, int64_t C, int64_t HW) {
  using Cm = compute_t<T>;
  const auto& nk = cpu::norm_rows<Cm>();
  const double count = static_cast<double>(N * HW);
  runtime::parallel_for(C, nn::row_grain(N * HW, 6), [&](int64_t cb, int64_t ce) {
    std::vector<Cm> gbuf(nn::is_16bit<T> ? static_cast<size_t>(HW) : 0), xbuf(gbuf.size()), ybuf(gbuf.size());
    // Row (n, c) of a (N, C, HW) tensor in the compute type.
    auto row = [&](const T* base, std::vector<Cm>& buf, int64_t n, int64_t c) {
      return nn::compute_row(base + (n * C + c) * HW, HW, buf);
    };
    for (int64_t c = cb; c < ce; ++c) {
      const Cm mu = mean[c];
      const Cm rstd = Cm(1) / std::sqrt(var[c] + static_cast<Cm>(a.eps));
      double sdy = 0, sdyx = 0;
      for (int64_t n = 0; n < N; ++n) {
        const Cm* g = row(dy, gbuf, n, c);
        sdy += nk.sum(g, HW);
        sdyx += nk.sum_dot_dev(g, row(x, xbuf, n, c), HW, mu);
      }
      const Cm sum_dy = static_cast<Cm>(sdy), sum_dy_xhat = static_cast<Cm>(sdyx * static_cast<double>(rstd));
      db[c] = sum_dy;
      dw[c] = sum_dy_xhat;
      // dx = k dy + B (x - mu) + D with k = w rstd, B = -k rstd mean(dy xhat), D = -k mean(dy).
      const Cm k = (w.empty() ? Cm(1) : w[c]) * rstd;
      const Cm B = -k * rstd * static_cast<Cm>(static_cast<double>(sum_dy_xhat) / count);
      const Cm D = -k * static_cast<Cm>(sdy / count);
      for (int64_t n = 0; n < N; ++n) {
        const Cm* g = row(dy, gbuf, n, c);
        const Cm* xr = row(x, xbuf, n, c);
        T* out = dx + (n * C + c) * HW;
        if constexpr (nn::is_16bit<T>) {
          nk.axpby_dev(g, xr, ybuf.data(), HW, k, B, mu, D);
          cpu::convert_n(ybuf.data(), out, HW);
        } else {
          nk.axpby_dev(g, xr, out, HW, k, B, mu, D);
        }
      }
    }
  });
}

void run_batch_norm_grad(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out,
                         const KernelContext&) {
  const auto& a = *static_cast<const BatchNormGradAttrs*>(attrs);
  const Buffer &dy = in[0], &x = in[1];
  const int64_t N = x.shape[0], C = x.shape[1], HW = nn::prod(x, 2, x.ndim);
  nn::Contig cdy(dy), cx(x);
  nn::visit_float(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    using Cm = compute_t<T>;
    const std::vector<Cm> mean = nn::load_vector<Cm>(&in[2]), var = nn::load_vector<Cm>(&in[3]);
    const std::vector<Cm> w = nn::load_vector<T>(a.has_weight ? &in[4] : nullptr);
    batch_norm_grad_typed<T>(a, cdy.get<T>(), cx.get<T>(), mean.data(), var.data(), w, out[0].ptr<T>(),
                             out[1].ptr<Cm>(), out[2].ptr<Cm>(), N, C, HW);
  });
}

const Primitive& batch_norm_grad_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<BatchNormGradAttrs> spec;
    spec.name = "batch_norm_grad";
    spec.fusion = FusionClass::Reduction;
    spec.residuals = {~0u, 0u};  // its own vjp differentiates the formula at every input
    spec.infer = [](const BatchNormGradAttrs& a, std::span<const TensorType> in, OutTypes& out) {
      SPORE_ASSERT(in.size() == 4u + a.has_weight, "batch_norm_grad takes dy, x, mean, var", a.has_weight ? ", weight" : "",
                   "; got ", in.size(), " inputs");
      const Shape& s = in[1].shape;
      SPORE_ASSERT(s.size() >= 2 && in[0].shape == s && in[0].dtype == in[1].dtype, "batch_norm_grad: dy ",
                   shape_str(in[0].shape), " must match x ", shape_str(s));
      const DType sd = stats_dtype(in[1].dtype);
      for (size_t k = 2; k < in.size(); ++k)
        SPORE_ASSERT(in[k].shape == Shape{s[1]}, "batch_norm_grad: input ", k, " has shape ", shape_str(in[k].shape),
                     ", the channel count is ", s[1]);
      SPORE_ASSERT(in[2].dtype == sd && in[3].dtype == sd, "batch_norm_grad: the statistics must be ", dtype_name(sd));
      SPORE_ASSERT(!a.has_weight || in[4].dtype == in[1].dtype, "batch_norm_grad: the weight must be ", dtype_name(in[1].dtype));
      out.add(in[1].dtype, s);
      out.add(sd, Shape{s[1]});
      out.add(sd, Shape{s[1]});
    };
    spec.cost = [](const BatchNormGradAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return elementwise_cost(in.first(2), out.first(1), 8);
    };
    Primitive& q = define_primitive(spec);
    q.decomposition = &decompose_batch_norm_grad;
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu_rows", .run = &run_batch_norm_grad});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (batch_norm_grad_def(), true);

}  // namespace

const Primitive& batch_norm_grad_primitive() { return batch_norm_grad_def(); }

}  // namespace spore::prims
