// SPDX-License-Identifier: Apache-2.0
#pragma once
// The *how* of a fused kernel, kept apart from its loop program (loop_program.h): how many
// elements a tile holds, how many lanes a vector instruction has, and whether tiles are spread
// over threads. The interpreter reads it now; the C++ emitter will read the same fields.
#include <cstdint>

#include "codegen/loop_program.h"

namespace spore::codegen {

struct Schedule {
  /// Elements per tile: the interpreter dispatches each instruction once per tile, so the tile
  /// must be long enough to hide that cost and short enough that the registers stay in L1.
  int64_t tile = 512;
  /// Lanes of one vector instruction for the compute type on this CPU; tiles are padded to it.
  int64_t lanes = 1;
  /// Threads to spread tiles over (1: run on the calling thread).
  int threads = 1;
  /// Fewest tiles a thread takes (runtime::parallel_for's grain).
  int64_t grain_tiles = 1;
};

/// Default tile length, in elements.
inline constexpr int64_t kDefaultTile = 512;

/// The schedule for running `p` over `numel` elements on this CPU with the runtime's thread
/// count: tiles of `tile` elements (rounded up to whole vectors), threads only when the work
/// is worth a parallel region (~20 us of one thread, PERF-NOTES.md).
Schedule make_schedule(const LoopProgram& p, int64_t numel, int64_t tile = kDefaultTile);

}  // namespace spore::codegen
