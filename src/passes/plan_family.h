// SPDX-License-Identifier: Apache-2.0
#pragma once
// One memory plan for every size of a graph over a symbolic dimension (jit's dynamic batch).
// Each size is still lowered on its own (kernels are chosen and oneDNN's prepared for that
// size's extents, and the lowering proves the graph's structure at that size), but the plans
// share one layout whose arena offsets are affine in the size (plan_memory_affine.h), one arena
// pool, and the results of their invariant steps (a BatchNorm folded into conv weights), which
// sit at constant offsets at the arena's start: a call at a new size runs in the arena the last
// size left, without recomputing them, and only a larger size grows it.
//
// The layout comes from the first two sizes: each buffer's bytes at both, read as per * n + base
// (or bounded by one when they are not), in a plan of the same structure (slots, steps, kernels,
// lifetimes). A later size joins when its plan has that structure; a buffer larger than its
// bound there (a kernel's scratch need not be affine in the size) raises the bound and the layout
// is made again for the sizes to come. Any other plan keeps a layout and pool of its own.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "passes/plan_memory.h"
#include "passes/plan_memory_affine.h"
#include "runtime/kept_reorders.h"
#include "runtime/plan.h"

namespace spore::passes {

/// A plan's arena buffers as lowering lays them out: each planned value's slot, or a step's
/// kernel scratch.
struct ArenaBuffers {
  std::vector<BufferLife> lives;
  std::vector<int32_t> slot;    // per buffer: the value's slot, or -1 for scratch
  std::vector<size_t> step;     // per buffer: the scratch's step (values: unused)
  std::vector<char> invariant;  // per buffer: an invariant step's result (kept across calls)
};

}  // namespace spore::runtime

namespace spore::runtime {

// Declared in runtime/plan.h (jit holds one per graph without knowing the lowering); defined
// here, by the lowering that fills it.
class PlanFamily {
 public:
  PlanFamily();
  /// Lays out `plan`, lowered at size `n` with `buffers`, in the family's layout and pool (slot
  /// and scratch offsets, arena size, pool and invariant key set). False, leaving the plan
  /// untouched, when the family has no layout yet or the plan does not fit it.
  bool adopt(Plan& plan, int64_t n, const passes::ArenaBuffers& buffers);
  /// How many plans joined (tests).
  int adopted() const;

 private:
  struct First {
    int64_t n = 0;
    std::string structure;
    std::vector<passes::BufferLife> lives;
  };
  bool form(int64_t n, const std::string& structure, const passes::ArenaBuffers& buffers);
  void layout();  // offsets_, layout_ and kept_bytes_ from bounds_

  mutable std::mutex mu_;
  std::optional<First> first_;
  std::string structure_;
  std::vector<passes::AffineBufferLife> bounds_;  // per buffer
  std::vector<char> invariant_;           // per buffer
  int64_t reference_ = 1;                 // the size placements are compared at
  std::vector<passes::Affine> offsets_;           // per buffer
  passes::AffineLayout layout_;                   // in placement order (for the peak)
  size_t kept_bytes_ = 0;
  std::shared_ptr<ArenaPool> pool_;
  std::shared_ptr<KeptReorders> kept_reorders_;
  uint64_t key_ = 0;
  int adopted_ = 0;
};

}  // namespace spore::runtime
