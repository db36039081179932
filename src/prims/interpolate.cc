// SPDX-License-Identifier: Apache-2.0
// interpolate: source indices and weights are computed once per output row and column with
// PyTorch's formulas and precision (nearest in float32 arithmetic; bilinear in the compute
// type), then every (n, c) plane is filled in parallel.
#include "prims/interpolate.h"
#include "prims/elementwise_infer.h"

#include <cmath>

#include "prims/norm_util.h"

namespace spore::prims {
namespace {

template <class T>
void interpolate_typed(const InterpolateAttrs& a, const T* x, T* y, int64_t planes, int64_t H, int64_t W) {
  using Cm = compute_t<T>;
  const int64_t OH = a.out_h, OW = a.out_w;
  if (!a.bilinear) {
    std::vector<int64_t> hs(static_cast<size_t>(OH)), ws(static_cast<size_t>(OW));
    for (int64_t i = 0; i < OH; ++i) hs[i] = nearest_src(i, H, OH);
    for (int64_t j = 0; j < OW; ++j) ws[j] = nearest_src(j, W, OW);
    runtime::parallel_for(planes, nn::row_grain(OH * OW), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p)
        for (int64_t i = 0; i < OH; ++i) {
          const T* xr = x + (p * H + hs[i]) * W;
          T* yr = y + (p * OH + i) * OW;
          for (int64_t j = 0; j < OW; ++j) yr[j] = xr[ws[j]];
        }
    });
    return;
  }
  const auto th = linear_table<Cm>(H, OH, a.align_corners), tw = linear_table<Cm>(W, OW, a.align_corners);
  runtime::parallel_for(planes, nn::row_grain(OH * OW, 4), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p)
      for (int64_t i = 0; i < OH; ++i) {
        const Lerp<Cm>& h = th[i];
        const T* r0 = x + (p * H + h.i0) * W;
        const T* r1 = x + (p * H + h.i1) * W;
        T* yr = y + (p * OH + i) * OW;
        for (int64_t j = 0; j < OW; ++j) {
          const Lerp<Cm>& w = tw[j];
          const Cm top = w.l0 * static_cast<Cm>(r0[w.i0]) + w.l1 * static_cast<Cm>(r0[w.i1]);
          const Cm bot = w.l0 * static_cast<Cm>(r1[w.i0]) + w.l1 * static_cast<Cm>(r1[w.i1]);
          yr[j] = static_cast<T>(h.l0 * top + h.l1 * bot);
        }
      }
  });
}

void run_interpolate(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const InterpolateAttrs*>(attrs);
  const Buffer& x = in[0];
  const int64_t planes = x.shape[0] * x.shape[1], H = x.shape[2], W = x.shape[3];
  if (planes * a.out_h * a.out_w == 0) return;
  nn::Contig cx(x);
  nn::visit_float(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    interpolate_typed<T>(a, cx.get<T>(), out[0].ptr<T>(), planes, H, W);
  });
}

const Primitive& interpolate_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<InterpolateAttrs> spec;
    spec.name = "interpolate";
    spec.fusion = FusionClass::Injective;
    spec.num_inputs = 1;
    spec.residuals = {0u, 0u};  // the vjp needs only the input shape
    spec.infer = [](const InterpolateAttrs& a, std::span<const TensorType> in, OutTypes& out) {
      const Shape& s = in[0].shape;
      SPORE_ASSERT(s.size() == 4, "interpolate rank ", s.size());
      out.add(in[0].dtype, Shape{s[0], s[1], a.out_h, a.out_w});
    };
    spec.cost = [](const InterpolateAttrs& a, std::span<const TensorType>, std::span<const TensorType> out) {
      const double n = cost_numel(out[0].shape);
      return Cost{n * (a.bilinear ? 6 : 0), 2 * n * dtype_size(out[0].dtype)};
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = &run_interpolate});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (interpolate_def(), true);

}  // namespace

const Primitive& interpolate_primitive() { return interpolate_def(); }

}  // namespace spore::prims
