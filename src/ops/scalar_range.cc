// SPDX-License-Identifier: Apache-2.0
// check_scalar_fits: refuses a C++ number that cannot be stored in a tensor's dtype, the way
// PyTorch's checked Scalar conversion does, so fills and bounds never wrap silently.
#include <cmath>
#include <limits>
#include <type_traits>

#include "ops/promote.h"

namespace spore::ops {

namespace {

struct IntRange {
  int64_t lo = 0, hi = 0;
  bool is_unsigned = false;
};

IntRange int_range(DType t) {
  IntRange r;
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      r = {static_cast<int64_t>(std::numeric_limits<T>::lowest()), static_cast<int64_t>(std::numeric_limits<T>::max()),
           std::is_unsigned_v<T>};
    }
  });
  return r;
}

bool fits(Scalar s, const IntRange& r, DType t) {
  if (s.kind() == Scalar::Kind::Bool) return true;
  if (s.kind() == Scalar::Kind::Int) {
    const int64_t v = s.to_int();
    // PyTorch lets a negative integer wrap into an unsigned dtype (uint8 - 1 is uint8 + 255),
    // so it accepts [-max, max] there; signed dtypes take exactly their range.
    return r.is_unsigned ? v >= -r.hi && v <= r.hi : v >= r.lo && v <= r.hi;
  }
  const double d = s.to_double();
  if (!std::isfinite(d)) return false;
  // int64's max is not a double: it rounds up to 2^63, which must itself be refused.
  const double hi = static_cast<double>(r.hi);
  return d >= static_cast<double>(r.lo) && (t == DType::Int64 ? d < hi : d <= hi);
}

double float_max(DType t) {
  switch (t) {
    case DType::Float16: return 65504.0;
    case DType::BFloat16: return 3.3895313892515355e38;
    case DType::Float32: return 3.4028234663852886e38;
    default: return INFINITY;
  }
}

}  // namespace

void check_scalar_fits(Scalar s, DType t, const char* op) {
  // Bool takes any number (non-zero is true). Floating dtypes take inf and NaN but, as PyTorch,
  // refuse finite values beyond their range (70000 into float16) instead of making them inf.
  if (t == DType::Bool) return;
  if (is_floating(t)) {
    const double d = s.to_double();
    if (!std::isfinite(d) || std::fabs(d) <= float_max(t)) return;
    throw Error(detail::cat("[", op, "] value ", d, " cannot be converted to ", dtype_name(t),
                            " without overflow; its largest finite value is ", float_max(t),
                            ": use inf explicitly or a wider dtype"));
  }
  if (fits(s, int_range(t), t)) return;
  const IntRange r = int_range(t);
  const auto value = [&] {
    return s.kind() == Scalar::Kind::Float ? detail::cat(s.to_double()) : detail::cat(s.to_int());
  };
  throw Error(detail::cat("[", op, "] value ", value(), " cannot be converted to ", dtype_name(t),
                          " without overflow; use a value in [", r.lo, ", ", r.hi,
                          "] or cast the tensor to a wider dtype first"));
}

}  // namespace spore::ops
