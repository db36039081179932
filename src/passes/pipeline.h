// SPDX-License-Identifier: Apache-2.0
#pragma once
// The compiler's pass pipeline (shared/ARCHITECTURE.md, "The compiler"): one pass per file, each
// a function from a graph to a graph, listed in order in pipeline.cc. Levels: O0 runs nothing,
// O1 everything but fusion, O2 everything. In debug builds the verifier runs after each pass;
// SPORE_DUMP_IR=dir writes the IR after each pass that changed it, and a timing table.
// SPORE_SKIP_PASSES=name,... leaves those passes out (A/B measurements, narrowing a pass bug).
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace spore::passes {

/// A pass: returns the rewritten graph, or `g` itself (the same pointer) when nothing changed.
/// Passes never change a graph's signature (its parameters, their roles, its output types and
/// state aliases), recurse into sub-graphs themselves, and keep every node's scope.
using PassFn = ir::GraphPtr (*)(const ir::GraphPtr& g);

struct PassInfo {
  const char* name;  // e.g. "dce"
  PassFn run;
  int min_level;  // runs at this optimization level and above (1 or 2)
};

/// The passes in pipeline order.
const std::vector<PassInfo>& pipeline();

/// The optimization level from SPORE_OPT_LEVEL (0, 1 or 2; default 1: fusion (O2) is opt-in until
/// the generated kernels are tuned).
int default_level();

/// Runs the pipeline at `level` on `g`.
ir::GraphPtr optimize(const ir::GraphPtr& g, int level);

/// optimize() over another list of passes (tests, tools): runs those with min_level <= level
/// in order, with the same verification (debug builds, or SPORE_VERIFY_IR=1: a pass that breaks
/// the graph or changes its signature fails with an internal error naming the pass), dumps and
/// timings. `level` must be 0, 1 or 2.
ir::GraphPtr run_passes(const ir::GraphPtr& g, std::span<const PassInfo> passes, int level);

}  // namespace spore::passes
