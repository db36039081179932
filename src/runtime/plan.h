// SPDX-License-Identifier: Apache-2.0
#pragma once
// A compiled plan (shared/ARCHITECTURE.md, "Runtime and memory"): a graph lowered to plain data,
// kernel calls in one fixed order over numbered slots with their geometry computed once, and
// the intermediates at byte offsets of one arena that memory planning laid out. Running it does
// no type inference, no registry lookup and no per-op allocation: only the plan's outputs come
// from the caching allocator, which reuses their blocks call after call. The lowering, which
// needs the IR, lives in src/passes/lower_plan.h.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/primitive.h"

namespace spore::runtime {

/// Where a slot's memory is.
enum class SlotKind : uint8_t {
  Input,     // graph input `index`, contiguous (a strided input is made contiguous on entry)
  Constant,  // a literal the plan holds (`constant`)
  Arena,     // `offset` bytes into the arena
  View,      // `base` slot's memory at `offset` elements, with this slot's strides
  Output,    // a fresh tensor per call (a plan output, or the memory a plan output views)
  Donated,   // written into graph input `index`'s buffer (a state update); a fresh tensor when
             // that input cannot be donated on this call (strided, or aliased by another input)
};

/// A value of the plan: its geometry and where it lives.
struct Slot {
  SlotKind kind = SlotKind::Arena;
  DType dtype = DType::Float32;
  bool weak = false;
  Shape shape;
  Strides strides;
  bool channels_last = false;  // Arena only: stored channels-last (`strides` say so too)
  bool invariant = false;      // Arena only: made by an invariant step (Plan::invariant_inputs)
  int64_t index = -1;  // Input, Donated: the graph input
  size_t offset = 0;   // Arena: bytes; View: elements from the base's first element
  int32_t base = -1;   // View: a slot that is not a view
  Tensor constant;     // Constant
  /// The type kernels are prepared for.
  TensorType type() const { return {dtype, weak, shape, channels_last}; }
};

/// One kernel call, or one control-flow node (`prim->eager` set) run on tensors that view the
/// arena.
struct Step {
  const Primitive* prim = nullptr;
  std::shared_ptr<const void> attrs;
  const KernelDef* kernel = nullptr;          // the kernel dispatch would pick for these types
  std::shared_ptr<PreparedKernel> prepared;   // prepared once, when the kernel has `prepare`
  size_t scratch_bytes = 0;
  size_t scratch_offset = 0;  // in the arena: planned like a value live during this step only
  std::vector<int32_t> in, out;               // slot ids
  bool invariant = false;  // reads only invariant values: skipped while Plan::invariant_inputs are unchanged
};

/// A graph output: its slot, and for a state write the input it replaces.
struct PlanOutput {
  int32_t slot = -1;
  std::optional<int32_t> updates;
};

/// What memory planning reported when the plan was lowered.
struct PlanMemory {
  size_t arena_bytes = 0;          // planned peak of the intermediates
  size_t intermediate_bytes = 0;   // their sum (kernel scratch included), without reuse
  size_t scratch_bytes = 0;        // the largest kernel scratch (each step's is planned in the arena)
};

class ArenaPool;
class KeptReorders;
/// Plans of one graph over a symbolic dimension, lowered at different sizes, that share a memory
/// layout and arena: defined by the lowering (passes/plan_family.h); jit holds one per graph.
class PlanFamily;

/// A fresh Plan::id.
uint64_t next_plan_id();

/// A lowered graph, specialized to one input signature and thread count.
struct Plan {
  std::string name;
  std::vector<TensorType> inputs;  // what run() takes (contiguity is not required)
  std::vector<Slot> slots;
  std::vector<Step> steps;
  std::vector<PlanOutput> outputs;
  /// The input slots invariant steps read (directly or through invariant steps): parameters and
  /// captured tensors the graph never writes. A call whose every such input has the pointer and
  /// storage version of the workspace's previous call skips the invariant steps: their results
  /// (a BatchNorm folded into conv weights, a weight scaled) are still in the arena, where
  /// memory planning keeps them for the whole plan. (Strided inputs are copied per call, so steps
  /// reading them rerun every call.)
  std::vector<int32_t> invariant_inputs;
  bool has_invariant_steps = false;  // (steps of literals alone have no invariant inputs)
  PlanMemory memory;
  int threads = 1;  // prepared library kernels fix their thread count
  /// Arenas of calls in flight: a call takes a free one, so concurrent calls never share one.
  /// Plans of one graph over a symbolic dimension lowered at different sizes share one pool
  /// (passes/plan_family.h): an arena serves whichever of them a call runs, grown when needed.
  std::shared_ptr<ArenaPool> pool;
  /// This plan, among all plans of the process (a workspace rebinds when it runs another plan).
  uint64_t id = next_plan_id();
  /// Plans with one key leave their invariant steps' results at the same arena offsets: a
  /// workspace whose last run of them was under this key (and whose invariant inputs are
  /// unchanged) skips them, whichever plan of the key it ran. 0: the plan's own (its `id`).
  uint64_t invariant_key = 0;
  /// Those results lie in the arena's first `kept_bytes`, copied when an arena grows (0: they
  /// are not kept together; a grown arena runs the invariant steps again).
  size_t kept_bytes = 0;
  /// The family's kept weight reorders (runtime/kept_reorders.h), or null.
  std::shared_ptr<KeptReorders> kept_reorders;
};

/// How many invariant steps plans of this process have run (tests: which calls remade them).
int64_t invariant_step_runs();

/// A pool for a new plan's `pool`.
std::shared_ptr<ArenaPool> make_arena_pool();

/// Runs `plan` on `inputs` (types as lowered) and returns every graph output. A donated state
/// output is returned as the input tensor itself, already written; any other output is fresh
/// or, when the graph returns an input unchanged (or a view of it), that input.
std::vector<Tensor> run(const Plan& plan, std::span<const Tensor> inputs);

/// How many plans this thread is running a control-flow step of (nested ones count): while it
/// is above 0, a control-flow node's sub-graphs run as plans of their own, lowered once per
/// sub-graph and input types (transforms/subgraph_plans.h), instead of op by op.
inline thread_local int tls_plan_control_flow = 0;

/// A short text listing of the plan: slots, steps and the memory report (tests, SPORE_LOG=jit).
std::string plan_str(const Plan& plan);

}  // namespace spore::runtime
