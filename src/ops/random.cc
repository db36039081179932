// SPDX-License-Identifier: Apache-2.0
// Public random ops: check arguments, draw a key from the device's default generator (or take
// the one given), then call the random primitive, which is a pure function of that key. Keys
// are drawn through prims::draw_key, so a jit trace sees which keys came from the generator.
#include "spore/ops/random.h"

#include <array>
#include <cmath>
#include <limits>

#include "prims/random.h"
#include "prims/random_key.h"
#include "runtime/dispatch.h"

namespace spore {

Generator& default_generator(Device device) {
  static std::array<Generator, kNumDeviceTypes> generators;  // default seed 0 on every device
  return generators[static_cast<int>(device.type)];
}

void manual_seed(uint64_t seed) {
  prims::DrawLog::note_reseed();  // inside a jit trace: the draws after this are constants
  for (int d = 0; d < kNumDeviceTypes; ++d) default_generator({static_cast<DeviceType>(d), 0}).manual_seed(seed);
}

}  // namespace spore

namespace spore::ops {
namespace {

int64_t checked_numel(const Shape& shape, const char* op) {
  int64_t n = 1;
  for (Dim d : shape) {
    SPORE_CHECK(d >= 0, "[", op, "] shape ", shape_str(shape), " has a negative dimension; sizes must be >= 0");
    n *= d;
  }
  return n;
}

void check_float(DType t, const char* op) {
  SPORE_CHECK(is_floating(t), "[", op, "] needs a floating dtype, got ", dtype_name(t),
              "; use randint for integers or cast the result");
}

Tensor fill(const Primitive& p, const Shape& shape, TensorOptions opt, double p0, double p1, double a, double b,
            RandomKey key) {
  prims::RandomFillAttrs at;
  at.shape = shape;
  at.dtype = opt.dtype;
  at.p0 = p0;
  at.p1 = p1;
  at.a = a;
  at.b = b;
  at.seed = key.seed;
  at.offset = key.offset;
  return runtime::call(p, at, {}, opt.device);
}

RandomKey next_key(const Shape& shape, TensorOptions opt, const char* op) {
  return prims::draw_key(opt.device, checked_numel(shape, op));
}

void check_uniform_bounds(double low, double high) {
  SPORE_CHECK(std::isfinite(low) && std::isfinite(high) && low <= high, "[uniform] needs finite low <= high, got low ",
              low, ", high ", high);
  SPORE_CHECK(std::isfinite(high - low), "[uniform] high - low overflows (low ", low, ", high ", high,
              "); use a narrower interval");
}

}  // namespace

Tensor uniform(const Shape& shape, double low, double high, TensorOptions opt, RandomKey key) {
  checked_numel(shape, "uniform");
  check_float(opt.dtype, "uniform");
  check_uniform_bounds(low, high);
  return fill(prims::uniform_primitive(), shape, opt, low, high, 0, 0, key);
}
Tensor uniform(const Shape& shape, double low, double high, TensorOptions opt) {
  check_float(opt.dtype, "uniform");
  check_uniform_bounds(low, high);
  return uniform(shape, low, high, opt, next_key(shape, opt, "uniform"));
}

Tensor normal(const Shape& shape, double mean, double std, TensorOptions opt, RandomKey key) {
  checked_numel(shape, "normal");
  check_float(opt.dtype, "normal");
  SPORE_CHECK(std::isfinite(mean) && std::isfinite(std) && std >= 0, "[normal] needs a finite mean and std >= 0, got mean ",
              mean, ", std ", std);
  return fill(prims::normal_primitive(), shape, opt, mean, std, 0, 0, key);
}
Tensor normal(const Shape& shape, double mean, double std, TensorOptions opt) {
  check_float(opt.dtype, "normal");
  SPORE_CHECK(std::isfinite(mean) && std::isfinite(std) && std >= 0, "[normal] needs a finite mean and std >= 0, got mean ",
              mean, ", std ", std);
  return normal(shape, mean, std, opt, next_key(shape, opt, "normal"));
}

Tensor truncated_normal(const Shape& shape, double mean, double std, double a, double b, TensorOptions opt) {
  check_float(opt.dtype, "truncated_normal");
  SPORE_CHECK(std::isfinite(mean) && std::isfinite(std) && std > 0, "[truncated_normal] needs a finite mean and std > 0, got mean ",
              mean, ", std ", std);
  SPORE_CHECK(a < b && !std::isnan(a) && !std::isnan(b), "[truncated_normal] needs bounds a < b, got a ", a, ", b ", b);
  const RandomKey key = next_key(shape, opt, "truncated_normal");
  return fill(prims::truncated_normal_primitive(), shape, opt, mean, std, a, b, key);
}

Tensor bernoulli(const Tensor& p) {
  SPORE_CHECK(p.defined(), "[bernoulli] input is an undefined tensor");
  SPORE_CHECK(is_floating(p.dtype()), "[bernoulli] needs floating probabilities, got ", dtype_name(p.dtype()),
              "; cast them to float32");
  const RandomKey key = prims::draw_key(p.device(), p.numel());
  return runtime::call(prims::bernoulli_primitive(), prims::RandomKeyAttrs{key.seed, key.offset}, {p});
}

Tensor bernoulli(const Shape& shape, double p, TensorOptions opt) {
  SPORE_CHECK(p >= 0 && p <= 1, "[bernoulli] p must be in [0, 1], got ", p);
  const RandomKey key = next_key(shape, opt, "bernoulli");
  return fill(prims::bernoulli_scalar_primitive(), shape, opt, p, 0, 0, 0, key);
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, TensorOptions opt) {
  SPORE_CHECK(low < high, "[randint] needs low < high, got low ", low, ", high ", high);
  SPORE_CHECK(opt.dtype != DType::Bool || (low >= 0 && high <= 2), "[randint] bool results need 0 <= low < high <= 2, got [",
              low, ", ", high, ")");
  visit_dtype(opt.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      SPORE_CHECK(low >= static_cast<int64_t>(std::numeric_limits<T>::lowest()) &&
                      high - 1 <= static_cast<int64_t>(std::numeric_limits<T>::max()),
                  "[randint] [", low, ", ", high, ") does not fit in ", dtype_name(opt.dtype), "; use a wider dtype");
  });
  const RandomKey key = next_key(shape, opt, "randint");
  prims::RandIntAttrs at{shape, opt.dtype, low, high, key.seed, key.offset};
  return runtime::call(prims::randint_primitive(), at, {}, opt.device);
}

Tensor permutation(int64_t n, TensorOptions opt) {
  SPORE_CHECK(n >= 0, "[permutation] n must be >= 0, got ", n);
  SPORE_CHECK(opt.dtype != DType::Bool, "[permutation] cannot hold indices in bool; use int64");
  visit_dtype(opt.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      SPORE_CHECK(n == 0 || n - 1 <= static_cast<int64_t>(std::numeric_limits<T>::max()), "[permutation] n = ", n,
                  " does not fit in ", dtype_name(opt.dtype), "; use int64");
  });
  const RandomKey key = prims::draw_key(opt.device, n);
  prims::RandIntAttrs at{{n}, opt.dtype, 0, n, key.seed, key.offset};
  return runtime::call(prims::permutation_primitive(), at, {}, opt.device);
}

}  // namespace spore::ops
