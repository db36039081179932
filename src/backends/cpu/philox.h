// SPDX-License-Identifier: Apache-2.0
#pragma once
// Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw, "Parallel random
// numbers: as easy as 1, 2, 3" (SC 2011). A block is a pure function of (counter, key), so every
// element of a random op can compute its own numbers from its global index: results never
// depend on the thread count, tiling, fusion or sharding (shared/ARCHITECTURE.md, "Randomness").
// Constants are the paper's (also Random123's philox.h): multipliers 0xD2511F53, 0xCD9E8D57 and
// Weyl key increments 0x9E3779B9 (golden ratio), 0xBB67AE85 (sqrt(3) - 1).
#include <array>
#include <cstdint>

namespace spore::cpu {

/// Four 32-bit outputs of one Philox block.
using PhiloxBlock = std::array<uint32_t, 4>;

/// One Philox4x32-10 block for a 128-bit counter and a 64-bit key.
inline PhiloxBlock philox4x32_10(PhiloxBlock c, uint32_t k0, uint32_t k1) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    const uint64_t p0 = static_cast<uint64_t>(kM0) * c[0];
    const uint64_t p1 = static_cast<uint64_t>(kM1) * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<uint32_t>(p0)};
  }
  return c;
}

/// The block of element `index` of an op keyed (seed, offset): counter = offset + index in the
/// low 64 bits, `lane` in the high 64 bits (a retry number for rejection sampling), key = seed.
inline PhiloxBlock philox_element(uint64_t seed, uint64_t offset, uint64_t index, uint32_t lane = 0) {
  const uint64_t ctr = offset + index;
  return philox4x32_10({static_cast<uint32_t>(ctr), static_cast<uint32_t>(ctr >> 32), lane, 0},
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

/// 64 random bits from two words.
inline uint64_t bits64(uint32_t hi, uint32_t lo) { return (static_cast<uint64_t>(hi) << 32) | lo; }

/// A double in [0, 1) with 53 random bits (every value a multiple of 2^-53).
inline double uniform53(uint32_t hi, uint32_t lo) {
  return static_cast<double>(bits64(hi, lo) >> 11) * 0x1.0p-53;
}
/// A double in (0, 1] with 53 random bits (safe for log()).
inline double uniform53_open0(uint32_t hi, uint32_t lo) {
  return static_cast<double>((bits64(hi, lo) >> 11) + 1) * 0x1.0p-53;
}
/// A float in [0, 1) with 24 random bits (exact in float32).
inline float uniform24(uint32_t w) { return static_cast<float>(w >> 8) * 0x1.0p-24f; }

}  // namespace spore::cpu
