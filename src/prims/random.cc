// SPDX-License-Identifier: Apache-2.0
// Floating-point random primitives: uniform, normal, truncated_normal and the two bernoullis.
// Every element computes its value from its own Philox block (see prims/random.h), so the
// parallel split changes only speed. Values are computed in double and rounded once to the dtype.
#include "prims/random.h"

#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/elementwise_loop.h"
#include "backends/cpu/philox.h"
#include "prims/elementwise_infer.h"
#include "prims/erfinv.h"
#include "prims/random_fill.h"
#include "prims/random_key.h"

namespace spore::prims {

bool bernoulli_draw(uint64_t seed, uint64_t offset, uint64_t i, double p) {
  const auto w = cpu::philox_element(seed, offset, i);
  return cpu::uniform53(w[0], w[1]) < p;
}

namespace {

using random_detail::fill_random;
using random_detail::define_fill;

template <class T>
T below(T x) {  // the largest T smaller than x
  if constexpr (std::is_floating_point_v<T>) {
    return std::nextafter(x, -std::numeric_limits<T>::infinity());
  } else {  // Half, BFloat16: step the sign-magnitude bit pattern
    T r = x;
    const float f = static_cast<float>(x);
    r.bits = f > 0 ? static_cast<uint16_t>(x.bits - 1) : f < 0 ? static_cast<uint16_t>(x.bits + 1) : uint16_t{0x8001};
    return r;
  }
}

void run_uniform(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const RandomFillAttrs*>(attrs);
  const RandomKey k = effective_key(a.seed, a.offset, in, 0);
  visit_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      const double lo = a.p0, hi = a.p1, span = hi - lo;
      const T top = below(T(static_cast<compute_t<T>>(hi)));
      fill_random<T>(out[0], 20, [&](uint64_t i) {
        const auto w = cpu::philox_element(k.seed, k.offset, i);
        // float64 gets 53 random bits; the others 24 (all a float32 mantissa holds).
        const double u = std::is_same_v<T, double> ? cpu::uniform53(w[0], w[1]) : cpu::uniform24(w[0]);
        const T v = T(static_cast<compute_t<T>>(lo + span * u));
        // Rounding to T may reach `high`; keep the interval half-open as documented.
        return (span > 0 && static_cast<double>(static_cast<compute_t<T>>(v)) >= hi) ? top : v;
      });
    } else {
      SPORE_ASSERT(false, "uniform of a non-float dtype");
    }
  });
}

// Box-Muller from the element's own block: u1 in (0, 1] from words 0-1, u2 from words 2-3.
inline double standard_normal(uint64_t seed, uint64_t offset, uint64_t i) {
  const auto w = cpu::philox_element(seed, offset, i);
  const double u1 = cpu::uniform53_open0(w[0], w[1]), u2 = cpu::uniform53(w[2], w[3]);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586477 * u2);
}

void run_normal(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const RandomFillAttrs*>(attrs);
  const RandomKey k = effective_key(a.seed, a.offset, in, 0);
  visit_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      fill_random<T>(out[0], 40, [&](uint64_t i) {
        return T(static_cast<compute_t<T>>(a.p0 + a.p1 * standard_normal(k.seed, k.offset, i)));
      });
    } else {
      SPORE_ASSERT(false, "normal of a non-float dtype");
    }
  });
}

// Inverse-CDF sampling of N(0,1) on [lo, hi]. Works on the side of 0 where the CDF values are
// small (flipping the interval when it lies above 0), so far-tail intervals keep their precision.
void run_truncated_normal(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out,
                          const KernelContext&) {
  const auto& a = *static_cast<const RandomFillAttrs*>(attrs);
  const RandomKey k = effective_key(a.seed, a.offset, in, 0);
  double lo = (a.a - a.p0) / a.p1, hi = (a.b - a.p0) / a.p1, sign = 1;
  if (lo > 0) {
    std::swap(lo, hi);
    lo = -lo;
    hi = -hi;
    sign = -1;
  }
  const double pa = 0.5 * std::erfc(-lo * 0.70710678118654752440), pb = 0.5 * std::erfc(-hi * 0.70710678118654752440);
  visit_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      fill_random<T>(out[0], 60, [&](uint64_t i) {
        const auto w = cpu::philox_element(k.seed, k.offset, i);
        const double p = pa + (pb - pa) * cpu::uniform53(w[0], w[1]);
        const double z = std::fmin(std::fmax(ndtri(p), lo), hi) * sign;
        return T(static_cast<compute_t<T>>(std::fmin(std::fmax(a.p0 + a.p1 * z, a.a), a.b)));
      });
    } else {
      SPORE_ASSERT(false, "truncated_normal of a non-float dtype");
    }
  });
}

void run_bernoulli_scalar(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out,
                          const KernelContext&) {
  const auto& a = *static_cast<const RandomFillAttrs*>(attrs);
  const RandomKey k = effective_key(a.seed, a.offset, in, 0);
  visit_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T one = T(static_cast<compute_t<T>>(1)), zero = T(static_cast<compute_t<T>>(0));
    fill_random<T>(out[0], 20, [&](uint64_t i) { return bernoulli_draw(k.seed, k.offset, i, a.p0) ? one : zero; });
  });
}

// The element index is the output's row-major index: the output is contiguous, so it is the
// distance of the run's output pointer from the start (inputs may have any strides).
void run_bernoulli(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const RandomKeyAttrs*>(attrs);
  const RandomKey k = effective_key(a.seed, a.offset, in, 1);
  std::atomic<bool> bad{false};
  visit_dtype(out[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      T* base = out[0].ptr<T>();
      cpu::elementwise_loop<1>(in.first(1), out[0], [&](const char* const* x, char* y, int64_t n) {
        const T* p = reinterpret_cast<const T*>(x[0]);
        T* o = reinterpret_cast<T*>(y);
        const uint64_t first = static_cast<uint64_t>(o - base);
        for (int64_t j = 0; j < n; ++j) {
          const double pj = static_cast<double>(static_cast<compute_t<T>>(p[j]));
          if (!(pj >= 0.0 && pj <= 1.0)) bad.store(true, std::memory_order_relaxed);
          o[j] = T(static_cast<compute_t<T>>(bernoulli_draw(k.seed, k.offset, first + j, pj) ? 1 : 0));
        }
      }, 20);
    } else {
      SPORE_ASSERT(false, "bernoulli of a non-float dtype");
    }
  });
  // Thrown here, on the calling thread: an exception may not leave an OpenMP region.
  SPORE_CHECK(!bad.load(), "[bernoulli] probabilities must be in [0, 1] (found a value outside, or NaN); "
              "clamp them first");
}

const Primitive& bernoulli_def() {
  static const Primitive& p = [] () -> const Primitive& {
    PrimitiveSpec<RandomKeyAttrs> spec;
    spec.name = "bernoulli";
    spec.effect = Effect::Random;
    spec.fusion = FusionClass::Elementwise;
    spec.num_inputs = -1;  // the probabilities, then in a jit graph the key
    spec.infer = [](const RandomKeyAttrs&, std::span<const TensorType> in, OutTypes& out) {
      check_key_input("bernoulli", in, 1);
      out.add(in[0].dtype, in[0].shape);
    };
    spec.cost = [](const RandomKeyAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return elementwise_cost(in.first(1), out, 20);  // one Philox block per element
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = &run_bernoulli});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered =
    (uniform_primitive(), normal_primitive(), truncated_normal_primitive(), bernoulli_scalar_primitive(),
     bernoulli_def(), true);

}  // namespace

const Primitive& uniform_primitive() {
  static const Primitive& p = define_fill<RandomFillAttrs>("uniform", &run_uniform, 20);
  return p;
}
const Primitive& normal_primitive() {
  static const Primitive& p = define_fill<RandomFillAttrs>("normal", &run_normal, 40);
  return p;
}
const Primitive& truncated_normal_primitive() {
  static const Primitive& p = define_fill<RandomFillAttrs>("truncated_normal", &run_truncated_normal, 60);
  return p;
}
const Primitive& bernoulli_scalar_primitive() {
  static const Primitive& p = define_fill<RandomFillAttrs>("bernoulli_scalar", &run_bernoulli_scalar, 20);
  return p;
}
const Primitive& bernoulli_primitive() { return bernoulli_def(); }

}  // namespace spore::prims
