// SPDX-License-Identifier: Apache-2.0
// floor_divide and remainder with PyTorch's formulas (c10::div_floor_floating and the
// remainder kernel), so results match bit for bit, including signed zeros and Inf/NaN.
#include "prims/divmod.h"

#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/elementwise_loop.h"
#include "prims/elementwise_infer.h"

namespace spore::prims {
namespace {

constexpr std::array<const char*, static_cast<int>(DivModOp::kCount)> kNames = {"floor_divide", "remainder"};

template <class C>
C floor_div_float(C a, C b) {
  if (b == 0) return a / b;  // +-inf or NaN, as IEEE division
  const C mod = std::fmod(a, b);
  C div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return std::copysign(C(0), a / b);
  C fl = std::floor(div);
  if (div - fl > C(0.5)) fl += 1;
  return fl;
}

template <class C>
C remainder_float(C a, C b) {
  C mod = std::fmod(a, b);
  if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
  return mod;
}

// b != 0 here. MIN / -1 overflows: the quotient wraps to MIN and the remainder is 0, as
// two's-complement hardware would give without trapping.
template <class T>
T floor_div_int(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(a));
    T q = static_cast<T>(a / b);
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  } else {
    return static_cast<T>(a / b);
  }
}

template <class T>
T remainder_int(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(0);
    T r = static_cast<T>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  } else {
    return static_cast<T>(a % b);
  }
}

template <DivModOp Op>
void run(const void*, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  std::atomic<bool> zero_division{false};
  visit_dtype(in[0].dtype, [&](auto tag) {
    using S = decltype(tag);
    using C = compute_t<S>;
    if constexpr (std::is_same_v<S, bool>) {
      SPORE_ASSERT(false, kNames[static_cast<int>(Op)], " on bool");
    } else {
      cpu::elementwise_loop<2>(in, out[0], [&](const char* const* x, char* y, int64_t n) {
        const S* a = reinterpret_cast<const S*>(x[0]);
        const S* b = reinterpret_cast<const S*>(x[1]);
        S* o = reinterpret_cast<S*>(y);
        for (int64_t i = 0; i < n; ++i) {
          const C va = static_cast<C>(a[i]), vb = static_cast<C>(b[i]);
          if constexpr (std::is_floating_point_v<C>) {
            o[i] = S(Op == DivModOp::floor_divide ? floor_div_float(va, vb) : remainder_float(va, vb));
          } else if (vb == 0) {
            // Flag it: throwing inside an OpenMP region would terminate; the caller throws.
            zero_division.store(true, std::memory_order_relaxed);
            o[i] = 0;
          } else {
            o[i] = Op == DivModOp::floor_divide ? floor_div_int(va, vb) : remainder_int(va, vb);
          }
        }
      }, 4);
    }
  });
  SPORE_CHECK(!zero_division.load(), "[", kNames[static_cast<int>(Op)],
              "] ZeroDivisionError: integer division by zero; check the divisor or use float tensors");
}

template <DivModOp Op>
const Primitive* define() {
  PrimitiveSpec<NoAttrs> spec;
  spec.name = kNames[static_cast<int>(Op)];
  spec.fusion = FusionClass::Elementwise;
  spec.num_inputs = 2;
  // floor_divide is piecewise constant (zero gradient); remainder's vjp needs a // b.
  spec.residuals = Op == DivModOp::remainder ? Residuals{3u, 0u} : Residuals{};
  spec.infer = [](const NoAttrs&, std::span<const TensorType> in, OutTypes& out) {
    SPORE_ASSERT(in[0].dtype == in[1].dtype, "divmod primitive inputs must share a dtype");
    infer_broadcast(kNames[static_cast<int>(Op)], in, in[0].dtype, out);
  };
  spec.cost = [](const NoAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
    return elementwise_cost(in, out, 4);
  };
  Primitive& p = define_primitive(spec);
  p.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = &run<Op>});
  return &p;
}

const std::array<const Primitive*, static_cast<int>(DivModOp::kCount)>& table() {
  static const std::array<const Primitive*, static_cast<int>(DivModOp::kCount)> t = {
      define<DivModOp::floor_divide>(), define<DivModOp::remainder>()};
  return t;
}

[[maybe_unused]] const bool registered = (table(), true);

}  // namespace

const Primitive& divmod_primitive(DivModOp op) { return *table()[static_cast<int>(op)]; }

}  // namespace spore::prims
