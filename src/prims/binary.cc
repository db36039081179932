// SPDX-License-Identifier: Apache-2.0
// The arithmetic binary primitives, one per row of SPORE_BINARY_FLOAT_OPS. float32/float64 run
// vectorized loops (with a scalar-operand variant), 16-bit floats compute in float32 blocks,
// integers wrap on overflow like two's-complement hardware (computed unsigned: no UB).
#include "prims/binary.h"

#include <array>
#include <cmath>
#include <type_traits>

#include "backends/cpu/elementwise_loop.h"
#include "backends/cpu/vec_kernels.h"
#include "prims/elementwise_infer.h"

namespace spore::prims {
namespace {

using cpu::BinaryOp;

template <BinaryOp Op, class T>
T int_op(T a, T b) {
  using U = std::make_unsigned_t<T>;
  if constexpr (Op == BinaryOp::add) return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  else if constexpr (Op == BinaryOp::sub) return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  else if constexpr (Op == BinaryOp::mul) return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  else if constexpr (Op == BinaryOp::maximum) return a < b ? b : a;
  else if constexpr (Op == BinaryOp::minimum) return b < a ? b : a;
  else if constexpr (Op == BinaryOp::pow) {
    if (b < 0) return a == 1 ? T(1) : (a == T(-1) ? ((b & 1) ? T(-1) : T(1)) : T(0));
    U r = 1, base = static_cast<U>(a);
    for (auto e = static_cast<std::make_unsigned_t<T>>(b); e; e >>= 1) {
      if (e & 1) r *= base;
      base *= base;
    }
    return static_cast<T>(r);
  } else {
    return T(0);  // div/atan2 never reach integers (the op casts to float)
  }
}

template <class T, class Fn, class ScalarFn>
void float_binary(std::span<const Buffer> in, const Buffer& out, Fn vec, ScalarFn vec_scalar) {
  const int64_t n = out.numel();
  const bool a_scalar = in[0].numel() == 1, b_scalar = in[1].numel() == 1;
  if (a_scalar != b_scalar && (a_scalar ? in[1] : in[0]).contiguous() && (a_scalar ? in[1] : in[0]).numel() == n &&
      out.contiguous()) {
    const T s = *static_cast<const T*>((a_scalar ? in[0] : in[1]).data);
    const T* v = static_cast<const T*>((a_scalar ? in[1] : in[0]).data);
    runtime::parallel_for(n, runtime::kParallelGrain, [&](int64_t b, int64_t e) {
      vec_scalar(s, v + b, static_cast<T*>(out.data) + b, e - b, b_scalar);
    });
    return;
  }
  cpu::elementwise_loop<2>(in, out, [&](const char* const* x, char* y, int64_t m) {
    vec(reinterpret_cast<const T*>(x[0]), reinterpret_cast<const T*>(x[1]), reinterpret_cast<T*>(y), m);
  });
}

template <BinaryOp Op, class F>
void run_binary(const void*, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& vk = cpu::vec_kernels();
  constexpr int idx = static_cast<int>(Op);
  const DType dt = out[0].dtype;
  if (dt == DType::Float32) {
    float_binary<float>(in, out[0], vk.binary_f32[idx], vk.binary_scalar_f32[idx]);
  } else if (dt == DType::Float64) {
    float_binary<double>(in, out[0], vk.binary_f64[idx], vk.binary_scalar_f64[idx]);
  } else {
    visit_dtype(dt, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        auto fn = vk.binary_f32[idx];
        cpu::elementwise_loop<2>(in, out[0], [&](const char* const* x, char* y, int64_t n) {
          alignas(64) float a[cpu::kElementwiseBlock], b[cpu::kElementwiseBlock];
          for (int64_t i = 0; i < n; i += cpu::kElementwiseBlock) {
            int64_t m = std::min(cpu::kElementwiseBlock, n - i);
            cpu::convert_n(reinterpret_cast<const T*>(x[0]) + i, a, m);
            cpu::convert_n(reinterpret_cast<const T*>(x[1]) + i, b, m);
            fn(a, b, a, m);
            cpu::convert_n(a, reinterpret_cast<T*>(y) + i, m);
          }
        });
      } else if constexpr (std::is_same_v<T, bool>) {
        // bool arithmetic as PyTorch: add = or, mul = and, max = or, min = and.
        cpu::elementwise_loop<2>(in, out[0], [&](const char* const* x, char* y, int64_t n) {
          const bool* a = reinterpret_cast<const bool*>(x[0]);
          const bool* b = reinterpret_cast<const bool*>(x[1]);
          bool* o = reinterpret_cast<bool*>(y);
          for (int64_t i = 0; i < n; ++i)
            o[i] = (Op == BinaryOp::add || Op == BinaryOp::maximum) ? (a[i] || b[i]) : (a[i] && b[i]);
        });
      } else if constexpr (std::is_integral_v<T>) {
        cpu::elementwise_loop<2>(in, out[0], [&](const char* const* x, char* y, int64_t n) {
          const T* a = reinterpret_cast<const T*>(x[0]);
          const T* b = reinterpret_cast<const T*>(x[1]);
          T* o = reinterpret_cast<T*>(y);
          for (int64_t i = 0; i < n; ++i) o[i] = int_op<Op>(a[i], b[i]);
        });
      }
    });
  }
}

constexpr const char* kNames[] = {
#define SPORE_NAME(name, F) #name,
    SPORE_BINARY_FLOAT_OPS(SPORE_NAME)
#undef SPORE_NAME
};

template <BinaryOp Op>
const Primitive& define_binary(KernelRunFn run) {
  PrimitiveSpec<NoAttrs> spec;
  spec.name = kNames[static_cast<int>(Op)];
  spec.fusion = FusionClass::Elementwise;
  spec.num_inputs = 2;
  spec.residuals = {3u, 0u};
  spec.infer = [](const NoAttrs&, std::span<const TensorType> in, OutTypes& out) {
    SPORE_ASSERT(in[0].dtype == in[1].dtype, "binary primitive inputs must share a dtype");
    infer_broadcast(kNames[static_cast<int>(Op)], in, in[0].dtype, out);
  };
  spec.cost = [](const NoAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
    return elementwise_cost(in, out, 1);
  };
  Primitive& p = define_primitive(spec);
  // Writes any dense output layout (elementwise_loop.h): plans may keep its values channels-last.
  p.add_kernel({.device = DeviceType::CPU, .name = "cpu_vec", .run = run,
                .takes_channels_last = [](const void*, std::span<const TensorType>, int) { return true; }});
  return p;
}

const std::array<const Primitive*, cpu::kNumBinaryOps>& table() {
  static const std::array<const Primitive*, cpu::kNumBinaryOps> t = [] {
    std::array<const Primitive*, cpu::kNumBinaryOps> a{};
#define SPORE_DEFINE(name, F) a[static_cast<int>(BinaryOp::name)] = &define_binary<BinaryOp::name>(&run_binary<BinaryOp::name, cpu::F>);
    SPORE_BINARY_FLOAT_OPS(SPORE_DEFINE)
#undef SPORE_DEFINE
    return a;
  }();
  return t;
}

[[maybe_unused]] const bool registered = (table(), true);

}  // namespace

const Primitive& binary_primitive(cpu::BinaryOp op) { return *table()[static_cast<int>(op)]; }

}  // namespace spore::prims
