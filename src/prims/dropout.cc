// SPDX-License-Identifier: Apache-2.0
#include "prims/dropout.h"

#include <type_traits>

#include "backends/cpu/elementwise_loop.h"
#include "prims/elementwise_infer.h"
#include "prims/random.h"
#include "prims/random_key.h"

namespace spore::prims {
namespace {

void run(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const DropoutAttrs*>(attrs);
  const RandomKey k = effective_key(a.seed, a.offset, in, 1);
  visit_dtype(out[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const C scale = static_cast<C>(1.0 / (1.0 - a.p));
      T* base = out[0].ptr<T>();
      cpu::elementwise_loop<1>(in.first(1), out[0], [&](const char* const* x, char* y, int64_t n) {
        const T* v = reinterpret_cast<const T*>(x[0]);
        T* o = reinterpret_cast<T*>(y);
        // The output is contiguous: its pointer gives the row-major index of the run.
        const uint64_t first = static_cast<uint64_t>(o - base);
        for (int64_t j = 0; j < n; ++j)
          o[j] = bernoulli_draw(k.seed, k.offset, first + j, a.p) ? T(C(0)) : T(static_cast<C>(v[j]) * scale);
      }, 20);
    } else {
      SPORE_ASSERT(false, "dropout of a non-float dtype");
    }
  });
}

const Primitive& def() {
  static const Primitive& p = [] () -> const Primitive& {
    PrimitiveSpec<DropoutAttrs> spec;
    spec.name = "dropout";
    spec.effect = Effect::Random;
    spec.fusion = FusionClass::Elementwise;
    spec.num_inputs = -1;  // x, then in a jit graph the key
    spec.infer = [](const DropoutAttrs&, std::span<const TensorType> in, OutTypes& out) {
      check_key_input("dropout", in, 1);
      infer_same(in.first(1), out);
    };
    spec.cost = [](const DropoutAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return elementwise_cost(in.first(1), out, 20);
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = &run});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (def(), true);

}  // namespace

const Primitive& dropout_primitive() { return def(); }

}  // namespace spore::prims
