// SPDX-License-Identifier: Apache-2.0
#pragma once
// Memory planning (shared/ARCHITECTURE.md, "The compiler"): buffers with lifetimes over one
// fixed execution order get byte offsets in one arena, so that two buffers live at the same step
// never share a byte. Each buffer goes into the smallest gap left between the already placed
// buffers whose lifetimes overlap its own (best fit), else above them all; two placement orders
// (largest first, and by breadth: the fullest steps' buffers first) are tried, the smaller kept.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace spore::passes {

/// A buffer of `bytes`, live from step `first` to step `last` (both included).
struct BufferLife {
  size_t bytes = 0;
  int64_t first = 0;
  int64_t last = 0;
};

/// Where each buffer goes, and the arena size.
struct MemoryLayout {
  std::vector<size_t> offsets;    // one per buffer, multiples of the alignment
  size_t peak = 0;                // the arena size
  size_t total = 0;               // the sum of the (aligned) sizes: the arena with no reuse
};

/// Lays out `buffers` with offsets aligned to `align` bytes (a power of two).
MemoryLayout plan_memory(std::span<const BufferLife> buffers, size_t align = 64);

}  // namespace spore::passes
