// SPDX-License-Identifier: Apache-2.0
// erfinv and ndtri in double precision. AS241 is M. J. Wichura, "Algorithm AS 241: The
// percentage points of the normal distribution", Applied Statistics 37 (1988) 477-484.
#include "prims/erfinv.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/elementwise_loop.h"
#include "prims/elementwise_infer.h"

namespace spore::prims {

double ndtri(double p) {
  if (!(p >= 0.0 && p <= 1.0)) return std::numeric_limits<double>::quiet_NaN();
  if (p == 0.0) return -std::numeric_limits<double>::infinity();
  if (p == 1.0) return std::numeric_limits<double>::infinity();
  const double q = p - 0.5;
  if (std::fabs(q) <= 0.425) {
    const double r = 0.180625 - q * q;
    return q * (((((((2.5090809287301226727e3 * r + 3.3430575583588128105e4) * r + 6.7265770927008700853e4) * r +
                    4.5921953931549871457e4) * r + 1.3731693765509461125e4) * r + 1.9715909503065514427e3) * r +
                 1.3314166789178437745e2) * r + 3.3871328727963666080e0) /
           (((((((5.2264952788528545610e3 * r + 2.8729085735721942674e4) * r + 3.9307895800092710610e4) * r +
                2.1213794301586595867e4) * r + 5.3941960214247511077e3) * r + 6.8718700749205790830e2) * r +
             4.2313330701600911252e1) * r + 1.0);
  }
  double r = std::sqrt(-std::log(q < 0 ? p : 1.0 - p));
  double val;
  if (r <= 5.0) {
    r -= 1.6;
    val = (((((((7.74545014278341407640e-4 * r + 2.27238449892691845833e-2) * r + 2.41780725177450611770e-1) * r +
               1.27045825245236838258e0) * r + 3.64784832476320460504e0) * r + 5.76949722146069140550e0) * r +
            4.63033784615654529590e0) * r + 1.42343711074968357734e0) /
          (((((((1.05075007164441684324e-9 * r + 5.47593808499534494600e-4) * r + 1.51986665636164571966e-2) * r +
               1.48103976427480074590e-1) * r + 6.89767334985100004550e-1) * r + 1.67638483018380384940e0) * r +
            2.05319162663775882187e0) * r + 1.0);
  } else {
    r -= 5.0;
    val = (((((((2.01033439929228813265e-7 * r + 2.71155556874348757815e-5) * r + 1.24266094738807843860e-3) * r +
               2.65321895265761230930e-2) * r + 2.96560571828504891230e-1) * r + 1.78482653991729133580e0) * r +
            5.46378491116411436990e0) * r + 6.65790464350110377720e0) /
          (((((((2.04426310338993978564e-15 * r + 1.42151175831644588870e-7) * r + 1.84631831751005468180e-5) * r +
               7.86869131145613259100e-4) * r + 1.48753612908506148525e-2) * r + 1.36929880922735805310e-1) * r +
            5.99832206555887937690e-1) * r + 1.0);
  }
  return q < 0 ? -val : val;
}

double erfinv_f64(double x) {
  if (std::isnan(x) || std::fabs(x) > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0.0) return x;  // keeps the sign of -0
  const double a = std::fabs(x);
  if (a == 1.0) return std::copysign(std::numeric_limits<double>::infinity(), x);
  constexpr double kSqrt1_2 = 0.70710678118654752440, kTwoOverSqrtPi = 1.12837916709551257390;
  double y;
  if (a <= 0.5) {
    // (1 + a) / 2 rounds away the low bits of a tiny a; Newton on erf (well conditioned here)
    // restores them.
    y = ndtri(0.5 * (1.0 + a)) * kSqrt1_2;
    for (int i = 0; i < 2; ++i) y -= (std::erf(y) - a) / (kTwoOverSqrtPi * std::exp(-y * y));
  } else {
    // Near 1, erf(y) - a cancels; 1 - a is exact for a >= 0.5 (Sterbenz), so solve erfc(y) = 1 - a.
    const double c = 1.0 - a;
    y = -ndtri(0.5 * c) * kSqrt1_2;
    for (int i = 0; i < 2; ++i) y += (std::erfc(y) - c) / (kTwoOverSqrtPi * std::exp(-y * y));
  }
  return std::copysign(y, x);
}

namespace {

void run(const void*, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  visit_dtype(in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      cpu::elementwise_loop<1>(in, out[0], [&](const char* const* x, char* y, int64_t n) {
        const T* a = reinterpret_cast<const T*>(x[0]);
        T* o = reinterpret_cast<T*>(y);
        for (int64_t i = 0; i < n; ++i) o[i] = T(static_cast<compute_t<T>>(erfinv_f64(static_cast<double>(a[i]))));
      }, 40);
    } else {
      SPORE_ASSERT(false, "erfinv on a non-float dtype");
    }
  });
}

const Primitive& def() {
  static const Primitive& p = [] () -> const Primitive& {
    PrimitiveSpec<NoAttrs> spec;
    spec.name = "erfinv";
    spec.fusion = FusionClass::Elementwise;
    spec.num_inputs = 1;
    spec.residuals = {0u, 1u};  // d/dx erfinv(x) = sqrt(pi)/2 * exp(y^2), from the output y
    spec.infer = [](const NoAttrs&, std::span<const TensorType> in, OutTypes& out) { infer_same(in, out); };
    spec.cost = [](const NoAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return elementwise_cost(in, out, 40);
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = &run});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (def(), true);

}  // namespace

const Primitive& erfinv_primitive() { return def(); }

}  // namespace spore::prims
