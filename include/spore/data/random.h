// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cmath>
#include <cstdint>

/// Counter-based randomness for the data pipeline: every random decision is a pure function of
/// (seed, epoch, sample index, draw number), so results never depend on threads or timing.
namespace spore::data {

/// SplitMix64's finalizer: a bijective 64-bit mix.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The key of one sample in one epoch for a consumer seeded with `seed`.
inline uint64_t sample_key(uint64_t seed, uint64_t epoch, uint64_t index) {
  return splitmix64(splitmix64(splitmix64(seed) ^ epoch) ^ index);
}

/// Draws derived from a key: the n-th draw is splitmix64(key + n * golden), a SplitMix64 stream.
class KeyedRandom {
 public:
  explicit KeyedRandom(uint64_t key) : key_(key) {}
  uint64_t next_u64() { return splitmix64(key_ + (counter_++) * 0x9e3779b97f4a7c15ull); }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  double uniform(double low, double high) { return low + (high - low) * uniform(); }
  /// Uniform integer in [0, n) for n > 0 (Lemire's multiply-shift; bias below 2^-40 for n < 2^24).
  int64_t below(int64_t n) {
    return static_cast<int64_t>((static_cast<unsigned __int128>(next_u64()) * static_cast<uint64_t>(n)) >> 64);
  }

 private:
  uint64_t key_;
  uint64_t counter_ = 0;
};

}  // namespace spore::data
