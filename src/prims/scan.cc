// SPDX-License-Identifier: Apache-2.0
// cumsum / cumprod: each line along the axis is scanned sequentially in a compute type
// (float32 for 16-bit floats, float64 for float32, int64 for integers), so the result is the
// same on any thread count; lines are split across threads.
#include "prims/scan.h"
#include "prims/elementwise_infer.h"

#include <algorithm>

#include "prims/reduce_engine.h"
#include "prims/reduce_ops.h"

namespace spore::prims {
namespace {

using namespace reduce_detail;

template <bool Prod, class In, class Out>
void run_typed(const Buffer& x, const Buffer& y, int axis) {
  // float32 runs in float64 like PyTorch's CPU scans (a running sum's error grows with its length).
  using C = std::conditional_t<std::is_floating_point_v<compute_t<In>>,
                               std::conditional_t<std::is_same_v<In, float>, double, compute_t<In>>, int64_t>;
  const int64_t L = x.ndim == 0 ? 1 : x.shape[axis], s = x.ndim == 0 ? 0 : x.strides[axis];
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.shape[d];
  for (int d = axis + 1; d < x.ndim; ++d) inner *= x.shape[d];
  const In* xp = x.ptr<In>();
  Out* yp = y.ptr<Out>();
  runtime::parallel_for(outer * inner, std::max<int64_t>(1, runtime::kParallelGrain / std::max<int64_t>(L, 1)),
                        [&](int64_t b, int64_t e) {
    for (int64_t line = b; line < e; ++line) {
      const int64_t ob = line / inner, ii = line % inner;
      // Input offset of the line's first element: decompose (ob, ii) over the other dims.
      int64_t off = 0, rem = ii;
      for (int d = x.ndim - 1; d > axis; --d) {
        off += (rem % x.shape[d]) * x.strides[d];
        rem /= x.shape[d];
      }
      rem = ob;
      for (int d = axis - 1; d >= 0; --d) {
        off += (rem % x.shape[d]) * x.strides[d];
        rem /= x.shape[d];
      }
      Out* dst = yp + ob * L * inner + ii;
      C acc = Prod ? C(1) : C(0);
      for (int64_t i = 0; i < L; ++i) {
        const C v = to_compute<C>(xp[off + i * s]);
        acc = Prod ? mul_(acc, v) : add_(acc, v);
        cpu::convert_n(&acc, dst + i * inner, 1);
      }
    }
  });
}

template <bool Prod>
void run_scan(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const ScanAttrs*>(attrs);
  if (out[0].numel() == 0) return;
  visit_dtype(in[0].dtype, [&](auto it) {
    visit_dtype(out[0].dtype, [&](auto ot) {
      using In = decltype(it);
      using Out = decltype(ot);
      // Only the pairs the public op builds: floats keep their dtype, the rest go to int64.
      if constexpr (is_floating(dtype_of<In>()) ? std::is_same_v<In, Out> : std::is_same_v<Out, int64_t>)
        run_typed<Prod, In, Out>(in[0], out[0], static_cast<int>(a.axis));
      else
        SPORE_ASSERT(false, "scan from ", dtype_name(in[0].dtype), " to ", dtype_name(out[0].dtype));
    });
  });
}

template <bool Prod>
const Primitive* define_scan() {
  PrimitiveSpec<ScanAttrs> spec;
  spec.name = Prod ? "cumprod" : "cumsum";
  spec.fusion = FusionClass::Opaque;
  spec.num_inputs = 1;
  spec.residuals = Prod ? Residuals{1u, 1u} : Residuals{1u, 0u};  // cumsum's vjp needs only the shape
  spec.infer = [](const ScanAttrs&, std::span<const TensorType> in, OutTypes& out) {
    out.add(is_integral(in[0].dtype, true) ? DType::Int64 : in[0].dtype, in[0].shape);
  };
  spec.cost = [](const ScanAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
    const double n = cost_numel(in[0].shape);
    return Cost{n, n * (dtype_size(in[0].dtype) + dtype_size(out[0].dtype))};
  };
  Primitive& p = define_primitive(spec);
  p.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = &run_scan<Prod>});
  return &p;
}

const Primitive& cumsum_def() {
  static const Primitive* p = define_scan<false>();
  return *p;
}
const Primitive& cumprod_def() {
  static const Primitive* p = define_scan<true>();
  return *p;
}

[[maybe_unused]] const bool registered = (cumsum_def(), cumprod_def(), true);

}  // namespace

const Primitive& scan_primitive(bool prod) { return prod ? cumprod_def() : cumsum_def(); }

}  // namespace spore::prims
