// SPDX-License-Identifier: Apache-2.0
// Integer random primitives: randint (exactly uniform in [low, high)) and permutation.
#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cpu/philox.h"
#include "prims/random.h"
#include "prims/random_fill.h"
#include "prims/random_key.h"

namespace spore::prims {
namespace {

using random_detail::define_fill;
using random_detail::fill_random;

// Lemire, "Fast random integer generation in an interval" (2019): the high half of x * range is
// uniform once the low half is outside the biased zone [0, 2^64 mod range). Rejected draws take
// the next 64 bits of the element's block, then blocks with counter high word = 1, 2, ... so the
// result stays a pure function of (key, i) and is exactly unbiased for any range up to 2^64.
uint64_t bounded(uint64_t seed, uint64_t offset, uint64_t i, uint64_t range) {
  uint32_t lane = 0;
  auto w = cpu::philox_element(seed, offset, i, lane);
  int half = 0;
  for (;;) {
    const uint64_t x = half == 0 ? cpu::bits64(w[0], w[1]) : cpu::bits64(w[2], w[3]);
    const unsigned __int128 m = static_cast<unsigned __int128>(x) * range;
    const uint64_t l = static_cast<uint64_t>(m);
    if (l >= range || l >= (0 - range) % range) return static_cast<uint64_t>(m >> 64);
    if (++half == 2) {
      half = 0;
      w = cpu::philox_element(seed, offset, i, ++lane);
    }
  }
}

template <class T>
T from_int(int64_t v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}

void run_randint(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const RandIntAttrs*>(attrs);
  const RandomKey k = effective_key(a.seed, a.offset, in, 0);
  // high - low computed unsigned: the range of [INT64_MIN, INT64_MAX) does not fit in int64.
  const uint64_t range = static_cast<uint64_t>(a.high) - static_cast<uint64_t>(a.low);
  visit_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    fill_random<T>(out[0], 20, [&](uint64_t i) {
      return from_int<T>(static_cast<int64_t>(static_cast<uint64_t>(a.low) + bounded(k.seed, k.offset, i, range)));
    });
  });
}

// Sorting by random 64-bit keys (ties broken by index) gives a uniform permutation up to the
// negligible chance of a tie, and one fixed result whatever the thread count.
void run_permutation(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const RandIntAttrs*>(attrs);
  const RandomKey k = effective_key(a.seed, a.offset, in, 0);
  const int64_t n = out[0].numel();
  std::vector<std::pair<uint64_t, int64_t>> keys(static_cast<size_t>(n));
  runtime::parallel_for(n, runtime::kParallelGrain / 20, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const auto w = cpu::philox_element(k.seed, k.offset, static_cast<uint64_t>(i));
      keys[static_cast<size_t>(i)] = {cpu::bits64(w[0], w[1]), i};
    }
  });
  std::sort(keys.begin(), keys.end());
  visit_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    fill_random<T>(out[0], 1, [&](uint64_t i) { return from_int<T>(keys[i].second); });
  });
}

[[maybe_unused]] const bool registered = (randint_primitive(), permutation_primitive(), true);

}  // namespace

const Primitive& randint_primitive() {
  static const Primitive& p = define_fill<RandIntAttrs>("randint", &run_randint, 20);
  return p;
}
const Primitive& permutation_primitive() {
  static const Primitive& p = define_fill<RandIntAttrs>("permutation", &run_permutation, 60);
  return p;
}

}  // namespace spore::prims
