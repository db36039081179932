// SPDX-License-Identifier: Apache-2.0
#pragma once
// The iteration geometry of a fused kernel call, shared by the loop interpreter and the compiled
// kernels: the output shape with size-1 dims dropped and dims merged where every input's
// strides allow, and each input's element strides over it (0 along broadcast dims).
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "core/primitive.h"

namespace spore::codegen {

inline constexpr int kMaxRank = 16;

struct Geometry {
  int ndim = 0;
  std::array<int64_t, kMaxRank> shape{};
  std::vector<std::array<int64_t, kMaxRank>> strides;  // per input
};

/// The geometry of inputs `in` (broadcast, right-aligned) over the output `out`, iterated in
/// out's memory order: out must be dense (contiguous in some order of its dims, e.g. a
/// channels-last plan value); every other output of the call shares its layout (same_layout).
Geometry geometry(std::span<const Buffer> in, const Buffer& out);

/// Whether b's elements fill its memory with no gaps in some order of its dims.
bool dense(const Buffer& b);
/// Same shape and the same strides (size-1 dims aside).
bool same_layout(const Buffer& a, const Buffer& b);

}  // namespace spore::codegen
