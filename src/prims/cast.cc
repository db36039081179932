// SPDX-License-Identifier: Apache-2.0
#include "prims/cast.h"

#include "backends/cpu/elementwise_loop.h"
#include "prims/elementwise_infer.h"

namespace spore::prims {
namespace {

void run_convert(std::span<const Buffer> in, const Buffer& out) {
  visit_dtype(in[0].dtype, [&](auto s_tag) {
    using S = decltype(s_tag);
    visit_dtype(out.dtype, [&](auto d_tag) {
      using D = decltype(d_tag);
      cpu::elementwise_loop<1>(in, out, [&](const char* const* x, char* y, int64_t n) {
        if constexpr (std::is_same_v<S, D>) std::memcpy(y, x[0], static_cast<size_t>(n) * sizeof(S));
        else cpu::convert_n(reinterpret_cast<const S*>(x[0]), reinterpret_cast<D*>(y), n);
      });
    });
  });
}

const Primitive& cast_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<CastAttrs> spec;
    spec.name = "cast";
    spec.fusion = FusionClass::Elementwise;
    spec.num_inputs = 1;
    spec.infer = [](const CastAttrs& a, std::span<const TensorType> in, OutTypes& out) {
      out.add(a.dtype, in[0].shape);
    };
    spec.cost = [](const CastAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return elementwise_cost(in, out, 1);
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu",
                  .run = [](const void*, std::span<const Buffer> in, std::span<const Buffer> out,
                            const KernelContext&) { run_convert(in, out[0]); }});
    return q;
  }();
  return p;
}

const Primitive& copy_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<NoAttrs> spec;
    spec.name = "copy";
    spec.fusion = FusionClass::Elementwise;
    spec.num_inputs = 1;
    spec.infer = [](const NoAttrs&, std::span<const TensorType> in, OutTypes& out) { infer_same(in, out); };
    spec.cost = [](const NoAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return elementwise_cost(in, out, 0);
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu",
                  .run = [](const void*, std::span<const Buffer> in, std::span<const Buffer> out,
                            const KernelContext&) { run_convert(in, out[0]); }});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (cast_def(), copy_def(), true);

}  // namespace

const Primitive& cast_primitive() { return cast_def(); }
const Primitive& copy_primitive() { return copy_def(); }

}  // namespace spore::prims
