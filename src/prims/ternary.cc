// SPDX-License-Identifier: Apache-2.0
// where, clamp and lerp. 16-bit floats compute in float32.
#include "prims/ternary.h"

#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/elementwise_loop.h"
#include "prims/elementwise_infer.h"

namespace spore::prims {
namespace {

constexpr std::array<const char*, static_cast<int>(TernaryOp::kCount)> kNames = {"where", "clamp", "lerp"};

template <class C>
inline C clamp_one(C x, C lo, C hi) {
  if constexpr (std::is_floating_point_v<C>) {
    // PyTorch: a NaN bound gives NaN; a NaN x passes through max and min (first operand kept).
    if (std::isnan(lo) || std::isnan(hi)) return std::numeric_limits<C>::quiet_NaN();
  }
  const C m = x < lo ? lo : x;
  return hi < m ? hi : m;
}

template <class C>
inline C lerp_one(C a, C b, C w) {
  // Two-sided so that w = 1 gives b exactly (PyTorch's at::native::lerp).
  return std::abs(w) < C(0.5) ? a + w * (b - a) : b - (b - a) * (C(1) - w);
}

template <TernaryOp Op>
void run(const void*, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  visit_dtype(out[0].dtype, [&](auto tag) {
    using S = decltype(tag);
    using C = compute_t<S>;
    if constexpr (Op == TernaryOp::where) {
      cpu::elementwise_loop<3>(in, out[0], [&](const char* const* x, char* y, int64_t n) {
        // Branch-free select on the bit patterns: the mask is unpredictable (relu's backward is
        // where(y > 0, g, 0)), so a branch per element mispredicts; this form vectorizes.
        using U = std::conditional_t<sizeof(S) == 1, uint8_t,
                                     std::conditional_t<sizeof(S) == 2, uint16_t, std::conditional_t<sizeof(S) == 4, uint32_t, uint64_t>>>;
        static_assert(sizeof(U) == sizeof(S));
        typedef U __attribute__((__may_alias__)) UA;  // the buffers hold S objects
        const uint8_t* c = reinterpret_cast<const uint8_t*>(x[0]);
        const UA* a = reinterpret_cast<const UA*>(x[1]);
        const UA* b = reinterpret_cast<const UA*>(x[2]);
        UA* o = reinterpret_cast<UA*>(y);
        for (int64_t i = 0; i < n; ++i) {
          const U m = static_cast<U>(U(0) - static_cast<U>(c[i] != 0));
          o[i] = static_cast<U>((a[i] & m) | (b[i] & static_cast<U>(~m)));
        }
      });
    } else if constexpr (Op == TernaryOp::lerp && !std::is_floating_point_v<C>) {
      SPORE_ASSERT(false, "lerp on an integer dtype");
    } else {
      cpu::elementwise_loop<3>(in, out[0], [&](const char* const* x, char* y, int64_t n) {
        const S* a = reinterpret_cast<const S*>(x[0]);
        const S* b = reinterpret_cast<const S*>(x[1]);
        const S* c = reinterpret_cast<const S*>(x[2]);
        S* o = reinterpret_cast<S*>(y);
        for (int64_t i = 0; i < n; ++i) {
          const C va = static_cast<C>(a[i]), vb = static_cast<C>(b[i]), vc = static_cast<C>(c[i]);
          if constexpr (Op == TernaryOp::clamp) o[i] = S(clamp_one(va, vb, vc));
          else o[i] = S(lerp_one(va, vb, vc));
        }
      });
    }
  });
}

template <TernaryOp Op>
const Primitive* define() {
  PrimitiveSpec<NoAttrs> spec;
  spec.name = kNames[static_cast<int>(Op)];
  spec.fusion = FusionClass::Elementwise;
  spec.num_inputs = 3;
  spec.residuals = Op == TernaryOp::where ? Residuals{1u, 0u} : Residuals{7u, 0u};
  spec.infer = [](const NoAttrs&, std::span<const TensorType> in, OutTypes& out) {
    const char* name = kNames[static_cast<int>(Op)];
    if constexpr (Op == TernaryOp::where) {
      SPORE_ASSERT(in[0].dtype == DType::Bool && in[1].dtype == in[2].dtype, "where primitive input dtypes");
      // Weak only when all three are: where(c, 1.0, 2.0) has c's shape and is a real tensor.
      infer_broadcast(name, in, in[1].dtype, out);
    } else {
      SPORE_ASSERT(in[0].dtype == in[1].dtype && in[1].dtype == in[2].dtype, name, " primitive inputs must share a dtype");
      infer_broadcast(name, in, in[0].dtype, out);
    }
  };
  spec.cost = [](const NoAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
    return elementwise_cost(in, out, 2);
  };
  Primitive& p = define_primitive(spec);
  // Writes any dense output layout (elementwise_loop.h): plans may keep its values channels-last.
  p.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = &run<Op>,
                .takes_channels_last = [](const void*, std::span<const TensorType>, int) { return true; }});
  return &p;
}

const std::array<const Primitive*, static_cast<int>(TernaryOp::kCount)>& table() {
  static const std::array<const Primitive*, static_cast<int>(TernaryOp::kCount)> t = {
      define<TernaryOp::where>(), define<TernaryOp::clamp>(), define<TernaryOp::lerp>()};
  return t;
}

[[maybe_unused]] const bool registered = (table(), true);

}  // namespace

const Primitive& ternary_primitive(TernaryOp op) { return *table()[static_cast<int>(op)]; }

}  // namespace spore::prims
