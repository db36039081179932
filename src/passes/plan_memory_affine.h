// SPDX-License-Identifier: Apache-2.0
#pragma once
// Memory planning over a symbolic size n (shared/ARCHITECTURE.md, "The compiler"; jit's dynamic
// batch): every buffer's bytes are an affine function per * n + base, and so is every offset, so
// that one layout serves every size. Two buffers live at the same step never share a byte at
// any n >= 1: for affine f and g, f(n) <= g(n) for all n >= 1 exactly when f(1) <= g(1) and f's
// slope is at most g's, which is how placements are compared. Buffers go in the order given (the
// caller puts the ones that must not move between sizes first: they get constant offsets when
// their sizes are constant), each at the candidate offset (0, or the end of a buffer placed
// before it whose lifetime overlaps its own) that clears every such buffer at every n and ends
// lowest at the reference size, else above them all.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace spore::passes {

/// per * n + base bytes (or an offset), both >= 0.
struct Affine {
  int64_t per = 0;
  int64_t base = 0;
  int64_t at(int64_t n) const { return per * n + base; }
  bool operator==(const Affine&) const = default;
};

/// A buffer of `bytes(n)`, live from step `first` to step `last` (both included) at every size.
struct AffineBufferLife {
  Affine bytes;
  int64_t first = 0;
  int64_t last = 0;
};

/// Where each buffer goes at any size.
struct AffineLayout {
  std::vector<Affine> offsets;  // one per buffer; slopes and bases multiples of the alignment
  std::vector<Affine> ends;     // offsets plus the aligned sizes
  /// The arena size at size n: the highest end.
  size_t peak_at(int64_t n) const;
};

/// Lays out `buffers` in the order given, aligned to `align` bytes (a power of two), choosing
/// among valid placements the one ending lowest at size `reference`.
AffineLayout plan_memory_affine(std::span<const AffineBufferLife> buffers, int64_t reference, size_t align = 64);

}  // namespace spore::passes
