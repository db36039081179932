// SPDX-License-Identifier: Apache-2.0
// The elementwise unary float primitives, one per row of SPORE_UNARY_FLOAT_OPS
// (backends/cpu/unary_math.h): same shape and dtype out; float32/float64 run the vectorized
// loops of the CPU's instruction set, 16-bit floats compute in float32 blocks, and the ops that
// make sense on integers (neg, abs, sign, square, relu) also run on them.
#include "prims/unary.h"

#include <array>

#include "backends/cpu/elementwise_loop.h"
#include "backends/cpu/vec_kernels.h"
#include "prims/elementwise_infer.h"

namespace spore::prims {
namespace {

using cpu::UnaryOp;

constexpr bool integer_ok(UnaryOp op) {
  return op == UnaryOp::neg || op == UnaryOp::abs || op == UnaryOp::sign || op == UnaryOp::square ||
         op == UnaryOp::relu;
}

template <UnaryOp Op, class F>
void run_unary(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const UnaryAttrs*>(attrs);
  const cpu::UnaryParams p{a.a, a.b};
  const auto& vk = cpu::vec_kernels();
  const DType dt = out[0].dtype;
  constexpr int idx = static_cast<int>(Op);
  if (dt == DType::Float32) {
    auto fn = vk.unary_f32[idx];
    cpu::elementwise_loop<1>(in, out[0], [&](const char* const* x, char* y, int64_t n) {
      fn(reinterpret_cast<const float*>(x[0]), reinterpret_cast<float*>(y), n, p);
    }, 8);
  } else if (dt == DType::Float64) {
    auto fn = vk.unary_f64[idx];
    cpu::elementwise_loop<1>(in, out[0], [&](const char* const* x, char* y, int64_t n) {
      fn(reinterpret_cast<const double*>(x[0]), reinterpret_cast<double*>(y), n, p);
    }, 8);
  } else if (dt == DType::Float16 || dt == DType::BFloat16) {
    auto fn = vk.unary_f32[idx];
    visit_dtype(dt, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        cpu::elementwise_loop<1>(in, out[0], [&](const char* const* x, char* y, int64_t n) {
          alignas(64) float buf[cpu::kElementwiseBlock];
          for (int64_t i = 0; i < n; i += cpu::kElementwiseBlock) {
            int64_t m = std::min(cpu::kElementwiseBlock, n - i);
            cpu::convert_n(reinterpret_cast<const T*>(x[0]) + i, buf, m);
            fn(buf, buf, m, p);
            cpu::convert_n(buf, reinterpret_cast<T*>(y) + i, m);
          }
        }, 8);
      }
    });
  } else {
    if constexpr (integer_ok(Op)) {
      visit_dtype(dt, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          cpu::elementwise_loop<1>(in, out[0], [&](const char* const* x, char* y, int64_t n) {
            const T* xs = reinterpret_cast<const T*>(x[0]);
            T* ys = reinterpret_cast<T*>(y);
            for (int64_t i = 0; i < n; ++i) ys[i] = static_cast<T>(F::f(xs[i], p));
          });
        }
      });
    } else {
      SPORE_ASSERT(false, "unary kernel reached with dtype ", dtype_name(dt));
    }
  }
}

const Primitive& define_unary(UnaryOp op, const char* name, KernelRunFn run) {
  PrimitiveSpec<UnaryAttrs> spec;
  spec.name = name;
  spec.fusion = FusionClass::Elementwise;
  spec.num_inputs = 1;
  spec.residuals = {1u, 0u};
  spec.infer = [](const UnaryAttrs&, std::span<const TensorType> in, OutTypes& out) { infer_same(in, out); };
  spec.cost = [](const UnaryAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
    return elementwise_cost(in, out, 4);
  };
  Primitive& p = define_primitive(spec);
  // Writes any dense output layout (elementwise_loop.h): plans may keep its values channels-last.
  p.add_kernel({.device = DeviceType::CPU, .name = "cpu_vec", .run = run,
                .takes_channels_last = [](const void*, std::span<const TensorType>, int) { return true; }});
  (void)op;
  return p;
}

const std::array<const Primitive*, cpu::kNumUnaryOps>& table() {
  static const std::array<const Primitive*, cpu::kNumUnaryOps> t = [] {
    std::array<const Primitive*, cpu::kNumUnaryOps> a{};
#define SPORE_DEFINE(name, F) \
  a[static_cast<int>(UnaryOp::name)] = &define_unary(UnaryOp::name, #name, &run_unary<UnaryOp::name, cpu::F>);
    SPORE_UNARY_FLOAT_OPS(SPORE_DEFINE)
#undef SPORE_DEFINE
    return a;
  }();
  return t;
}

[[maybe_unused]] const bool registered = (table(), true);

}  // namespace

const Primitive& unary_primitive(cpu::UnaryOp op) { return *table()[static_cast<int>(op)]; }

bool unary_supports_integers(cpu::UnaryOp op) { return integer_ok(op); }

}  // namespace spore::prims
