// SPDX-License-Identifier: Apache-2.0
// Memory planning over a symbolic size (passes/plan_memory_affine.h): one layout whose offsets
// are affine in n; at every n, buffers live at the same step never share a byte, every offset is
// aligned, and buffers placed first with constant sizes keep constant offsets.
#include "passes/plan_memory_affine.h"

#include <gtest/gtest.h>

#include <random>

namespace spore::passes {
namespace {

void expect_valid_at(std::span<const AffineBufferLife> b, const AffineLayout& l, int64_t n) {
  const size_t peak = l.peak_at(n);
  for (size_t i = 0; i < b.size(); ++i) {
    const int64_t oi = l.offsets[i].at(n), si = b[i].bytes.at(n);
    ASSERT_EQ(oi % 64, 0) << "buffer " << i << " at n = " << n;
    ASSERT_LE(static_cast<size_t>(oi + si), peak) << "buffer " << i << " at n = " << n;
    for (size_t j = i + 1; j < b.size(); ++j) {
      const int64_t oj = l.offsets[j].at(n), sj = b[j].bytes.at(n);
      if (si == 0 || sj == 0 || !(b[i].first <= b[j].last && b[j].first <= b[i].last)) continue;
      ASSERT_FALSE(oi < oj + sj && oj < oi + si) << "buffers " << i << " and " << j << " share bytes at n = " << n;
    }
  }
}

TEST(PlanMemoryAffine, AChainReusesMemoryAtEverySize) {
  // a -> b -> c -> d, each n * 256 bytes: c takes a's bytes, d takes b's, at every n.
  std::vector<AffineBufferLife> b = {{{256, 0}, 0, 1}, {{256, 0}, 1, 2}, {{256, 0}, 2, 3}, {{256, 0}, 3, 3}};
  const AffineLayout l = plan_memory_affine(b, 8);
  EXPECT_EQ(l.offsets[0], l.offsets[2]);
  EXPECT_EQ(l.offsets[1], l.offsets[3]);
  EXPECT_EQ(l.peak_at(1), 512u);
  EXPECT_EQ(l.peak_at(10), 5120u);
  for (int64_t n : {1, 2, 7, 1000}) expect_valid_at(b, l, n);
}

TEST(PlanMemoryAffine, ConstantBuffersPlacedFirstKeepTheirOffsets) {
  // Two weights live throughout (placed first), then activations that grow with n.
  std::vector<AffineBufferLife> b = {{{0, 1000}, 0, 9}, {{0, 300}, 0, 9}, {{4096, 0}, 0, 4}, {{64, 64}, 3, 9}};
  const AffineLayout l = plan_memory_affine(b, 16);
  EXPECT_EQ(l.offsets[0], (Affine{0, 0}));
  EXPECT_EQ(l.offsets[1], (Affine{0, 1024}));
  for (int64_t n : {1, 3, 16, 100000}) expect_valid_at(b, l, n);
}

TEST(PlanMemoryAffine, AGapThatOnlyFitsSmallSizesIsNotTaken) {
  // Buffer 1 (constant 4 KiB) dies before buffer 3 is made; buffer 2 stays live above it. A
  // buffer of n * 64 bytes fits in buffer 1's 4 KiB at n <= 64 only, so it must go above.
  std::vector<AffineBufferLife> b = {{{0, 4096}, 0, 1}, {{0, 64}, 0, 3}, {{64, 0}, 2, 3}};
  const AffineLayout l = plan_memory_affine(b, 4);
  for (int64_t n : {1, 4, 64, 65, 10000}) expect_valid_at(b, l, n);
  // A constant buffer that fits the gap takes it.
  std::vector<AffineBufferLife> c = {{{0, 4096}, 0, 1}, {{0, 64}, 0, 3}, {{0, 1024}, 2, 3}};
  const AffineLayout m = plan_memory_affine(c, 4);
  EXPECT_EQ(m.offsets[2], (Affine{0, 0}));
  EXPECT_EQ(m.peak_at(1000), 4096u + 64u);
}

TEST(PlanMemoryAffine, RandomLifetimesNeverOverlapAtAnySize) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<AffineBufferLife> b;
    const int steps = 30;
    for (int i = 0; i < 60; ++i) {
      const int64_t first = static_cast<int64_t>(rng() % steps);
      const int64_t last = first + static_cast<int64_t>(rng() % 8);
      const int64_t per = rng() % 3 == 0 ? 0 : static_cast<int64_t>(rng() % 5000);
      const int64_t base = static_cast<int64_t>(rng() % 7000);
      b.push_back({{per, base}, first, last});
    }
    const AffineLayout l = plan_memory_affine(b, 1 + static_cast<int64_t>(rng() % 64));
    for (int64_t n : {1, 2, 3, 5, 17, 64, 65, 999, 123457}) expect_valid_at(b, l, n);
  }
}

}  // namespace
}  // namespace spore::passes
