// SPDX-License-Identifier: Apache-2.0
// argmax / argmin over one axis: the int64 index of the first extreme value; a NaN counts as
// the extreme (the first NaN wins), as in PyTorch. The result is exact, so splitting work over
// threads cannot change it; outputs are split across threads, each scanned sequentially.
#include <array>
#include <cmath>

#include "prims/reduce.h"
#include "prims/elementwise_infer.h"
#include "prims/reduce_engine.h"

namespace spore::prims {
namespace {

using namespace reduce_detail;

template <bool Max, class In>
void run_typed(const Geometry& g, const In* x, int64_t* y) {
  using C = std::conditional_t<std::is_floating_point_v<compute_t<In>>, compute_t<In>, int64_t>;
  const int64_t R = g.R, s = g.rstride[g.nr - 1];
  runtime::parallel_for(g.M, std::max<int64_t>(1, runtime::kParallelGrain / std::max<int64_t>(R, 1)),
                        [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      const In* p = x + g.kept_offset(o);
      C best = to_compute<C>(p[0]);
      int64_t bi = 0;
      for (int64_t i = 1; i < R && best == best; ++i) {
        const C v = to_compute<C>(p[i * s]);
        if ((Max ? v > best : v < best) || v != v) {
          best = v;
          bi = i;
        }
      }
      y[o] = bi;
    }
  });
}

template <bool Max>
void run_arg(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const ArgReduceAttrs*>(attrs);
  const Buffer& x = in[0];
  std::array<bool, 16> reduced{};
  if (a.axis < x.ndim) reduced[static_cast<size_t>(a.axis)] = true;
  const Geometry g = make_geometry(x, reduced.data());
  if (g.M == 0) return;
  SPORE_ASSERT(g.R > 0, "argmax/argmin over an empty axis reached the kernel");
  visit_dtype(x.dtype, [&](auto tag) { run_typed<Max>(g, x.ptr<decltype(tag)>(), out[0].ptr<int64_t>()); });
}

template <bool Max>
const Primitive* define_arg() {
  PrimitiveSpec<ArgReduceAttrs> spec;
  spec.name = Max ? "argmax" : "argmin";
  spec.fusion = FusionClass::Reduction;
  spec.num_inputs = 1;
  spec.infer = [](const ArgReduceAttrs& a, std::span<const TensorType> in, OutTypes& out) {
    const int64_t axes[1] = {a.axis};
    out.add(DType::Int64, reduce_shape(in[0].shape, axes, a.keepdims));
  };
  spec.cost = [](const ArgReduceAttrs&, std::span<const TensorType> in, std::span<const TensorType>) {
    const double n = cost_numel(in[0].shape);
    return Cost{n, n * dtype_size(in[0].dtype)};
  };
  Primitive& p = define_primitive(spec);
  p.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = &run_arg<Max>});
  return &p;
}

const Primitive& argmax_def() {
  static const Primitive* p = define_arg<true>();
  return *p;
}
const Primitive& argmin_def() {
  static const Primitive* p = define_arg<false>();
  return *p;
}

[[maybe_unused]] const bool registered = (argmax_def(), argmin_def(), true);

}  // namespace

const Primitive& arg_reduce_primitive(bool max) { return max ? argmax_def() : argmin_def(); }

}  // namespace spore::prims
