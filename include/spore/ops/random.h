// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <atomic>
#include <cstdint>

#include "spore/ops/creation.h"
#include "spore/tensor.h"

namespace spore {

/// Philox key material for one random op: results are a pure function of (seed, offset) and
/// each element's index, whatever the thread count or tiling.
struct RandomKey {
  uint64_t seed = 0;
  uint64_t offset = 0;
};

/// Per-device generator state. Each random op takes the current offset as its key and advances
/// the offset by the op's element count (rounded up to a multiple of 4).
class Generator {
 public:
  explicit Generator(uint64_t seed = 0) : seed_(seed) {}
  void manual_seed(uint64_t seed) {
    seed_ = seed;
    offset_ = 0;
  }
  /// Reserves the counters for `numel` elements. Safe to call from several threads: each call
  /// gets its own range (which thread gets which is up to the scheduler).
  RandomKey next(int64_t numel) {
    const uint64_t step = (static_cast<uint64_t>(numel) + 3) / 4 * 4;
    return RandomKey{seed_.load(std::memory_order_relaxed), offset_.fetch_add(step, std::memory_order_relaxed)};
  }
  uint64_t seed() const { return seed_.load(std::memory_order_relaxed); }
  uint64_t offset() const { return offset_.load(std::memory_order_relaxed); }
  void set_state(uint64_t seed, uint64_t offset) {
    seed_ = seed;
    offset_ = offset;
  }

 private:
  std::atomic<uint64_t> seed_;
  std::atomic<uint64_t> offset_{0};
};

/// The default generator of a device. Draws from several threads do not race, but their
/// order, and so their numbers, depends on scheduling: give each thread of work its own key.
Generator& default_generator(Device device = kCPU);
/// Seeds the default generator.
void manual_seed(uint64_t seed);

}  // namespace spore

namespace spore::ops {

Tensor uniform(const Shape& shape, double low = 0.0, double high = 1.0, TensorOptions opt = {});
Tensor normal(const Shape& shape, double mean = 0.0, double std = 1.0, TensorOptions opt = {});
/// Values from N(mean, std) truncated to [a, b] (sampled exactly by inverse CDF).
Tensor truncated_normal(const Shape& shape, double mean = 0.0, double std = 1.0, double a = -2.0,
                        double b = 2.0, TensorOptions opt = {});
/// 1 with probability p (elementwise, p a tensor of probabilities).
Tensor bernoulli(const Tensor& p);
Tensor bernoulli(const Shape& shape, double p, TensorOptions opt = {});
/// Integers in [low, high) (int64 by default).
Tensor randint(int64_t low, int64_t high, const Shape& shape, TensorOptions opt = {DType::Int64, kCPU});
/// A random permutation of 0..n-1 (int64).
Tensor permutation(int64_t n, TensorOptions opt = {DType::Int64, kCPU});

// The same with an explicit key (pure functions; what a compiled graph calls).
Tensor uniform(const Shape& shape, double low, double high, TensorOptions opt, RandomKey key);
Tensor normal(const Shape& shape, double mean, double std, TensorOptions opt, RandomKey key);

}  // namespace spore::ops
