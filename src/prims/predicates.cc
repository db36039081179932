// SPDX-License-Identifier: Apache-2.0
// isnan / isinf / isfinite / logical_not: one primitive each, any dtype in, bool out.
#include "prims/predicates.h"

#include <array>
#include <cmath>
#include <type_traits>

#include "backends/cpu/elementwise_loop.h"
#include "prims/elementwise_infer.h"

namespace spore::prims {
namespace {

constexpr std::array<const char*, static_cast<int>(PredicateOp::kCount)> kNames = {"isnan", "isinf", "isfinite",
                                                                                   "logical_not"};

template <PredicateOp Op, class C>
inline bool apply(C v) {
  if constexpr (Op == PredicateOp::logical_not) {
    return v == C(0);
  } else if constexpr (std::is_floating_point_v<C>) {
    if constexpr (Op == PredicateOp::isnan) return std::isnan(v);
    else if constexpr (Op == PredicateOp::isinf) return std::isinf(v);
    else return std::isfinite(v);
  } else {
    return Op == PredicateOp::isfinite;  // integers are always finite
  }
}

template <PredicateOp Op>
void run(const void*, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  visit_dtype(in[0].dtype, [&](auto tag) {
    using S = decltype(tag);
    using C = compute_t<S>;
    cpu::elementwise_loop<1>(in, out[0], [&](const char* const* x, char* y, int64_t n) {
      const S* a = reinterpret_cast<const S*>(x[0]);
      bool* o = reinterpret_cast<bool*>(y);
      for (int64_t i = 0; i < n; ++i) o[i] = apply<Op>(static_cast<C>(a[i]));
    });
  });
}

template <PredicateOp Op>
const Primitive* define() {
  PrimitiveSpec<NoAttrs> spec;
  spec.name = kNames[static_cast<int>(Op)];
  spec.fusion = FusionClass::Elementwise;
  spec.num_inputs = 1;
  spec.infer = [](const NoAttrs&, std::span<const TensorType> in, OutTypes& out) { out.add(DType::Bool, in[0].shape); };
  spec.cost = [](const NoAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
    return elementwise_cost(in, out, 1);
  };
  Primitive& p = define_primitive(spec);
  p.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = &run<Op>});
  return &p;
}

const std::array<const Primitive*, static_cast<int>(PredicateOp::kCount)>& table() {
  static const std::array<const Primitive*, static_cast<int>(PredicateOp::kCount)> t = {
      define<PredicateOp::isnan>(), define<PredicateOp::isinf>(), define<PredicateOp::isfinite>(),
      define<PredicateOp::logical_not>()};
  return t;
}

[[maybe_unused]] const bool registered = (table(), true);

}  // namespace

const Primitive& predicate_primitive(PredicateOp op) { return *table()[static_cast<int>(op)]; }

}  // namespace spore::prims
