// SPDX-License-Identifier: Apache-2.0
// Comparison, logical and bitwise primitives. Inputs share a dtype (the op promoted them);
// NaN compares unequal to everything, as IEEE says.
#include "prims/compare.h"

#include <array>

#include "backends/cpu/elementwise_loop.h"
#include "prims/elementwise_infer.h"

namespace spore::prims {
namespace {

constexpr std::array<const char*, static_cast<int>(CompareOp::kCount)> kNames = {
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"};

template <CompareOp Op, class T>
inline auto apply(T a, T b) {
  if constexpr (Op == CompareOp::equal) return a == b;
  else if constexpr (Op == CompareOp::not_equal) return a != b;
  else if constexpr (Op == CompareOp::less) return a < b;
  else if constexpr (Op == CompareOp::less_equal) return a <= b;
  else if constexpr (Op == CompareOp::greater) return a > b;
  else if constexpr (Op == CompareOp::greater_equal) return a >= b;
  else if constexpr (Op == CompareOp::logical_and) return a != T(0) && b != T(0);
  else if constexpr (Op == CompareOp::logical_or) return a != T(0) || b != T(0);
  else if constexpr (Op == CompareOp::logical_xor) return (a != T(0)) != (b != T(0));
  else if constexpr (Op == CompareOp::bitwise_and) return static_cast<T>(a & b);
  else if constexpr (Op == CompareOp::bitwise_or) return static_cast<T>(a | b);
  else return static_cast<T>(a ^ b);
}

constexpr bool is_bitwise(CompareOp op) { return op >= CompareOp::bitwise_and; }

template <CompareOp Op>
void run(const void*, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  visit_dtype(in[0].dtype, [&](auto tag) {
    using S = decltype(tag);
    using T = compute_t<S>;
    if constexpr (is_bitwise(Op) && !std::is_integral_v<T>) {
      SPORE_ASSERT(false, "bitwise op on a float dtype");
    } else {
      using O = std::conditional_t<is_bitwise(Op), S, bool>;
      cpu::elementwise_loop<2>(in, out[0], [&](const char* const* x, char* y, int64_t n) {
        const S* a = reinterpret_cast<const S*>(x[0]);
        const S* b = reinterpret_cast<const S*>(x[1]);
        O* o = reinterpret_cast<O*>(y);
        for (int64_t i = 0; i < n; ++i) o[i] = static_cast<O>(apply<Op>(static_cast<T>(a[i]), static_cast<T>(b[i])));
      });
    }
  });
}

template <CompareOp Op>
const Primitive* define() {
  PrimitiveSpec<NoAttrs> spec;
  spec.name = kNames[static_cast<int>(Op)];
  spec.fusion = FusionClass::Elementwise;
  spec.num_inputs = 2;
  spec.infer = [](const NoAttrs&, std::span<const TensorType> in, OutTypes& out) {
    SPORE_ASSERT(in[0].dtype == in[1].dtype, "compare primitive inputs must share a dtype");
    infer_broadcast(kNames[static_cast<int>(Op)], in, is_bitwise(Op) ? in[0].dtype : DType::Bool, out);
  };
  spec.cost = [](const NoAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
    return elementwise_cost(in, out, 1);
  };
  Primitive& p = define_primitive(spec);
  p.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = &run<Op>});
  return &p;
}

const std::array<const Primitive*, static_cast<int>(CompareOp::kCount)>& table() {
  static const auto t = [] {
    using C = CompareOp;
    return std::array<const Primitive*, static_cast<int>(C::kCount)>{
        define<C::equal>(), define<C::not_equal>(), define<C::less>(), define<C::less_equal>(),
        define<C::greater>(), define<C::greater_equal>(), define<C::logical_and>(), define<C::logical_or>(),
        define<C::logical_xor>(), define<C::bitwise_and>(), define<C::bitwise_or>(), define<C::bitwise_xor>()};
  }();
  return t;
}

[[maybe_unused]] const bool registered = (table(), true);

}  // namespace

const Primitive& compare_primitive(CompareOp op) { return *table()[static_cast<int>(op)]; }

}  // namespace spore::prims
