// SPDX-License-Identifier: Apache-2.0
#pragma once
// How jit calls ran: as a lowered plan (runtime/plan.h) or on the interpreter, counted over the
// process, with the reason of the latest interpreted call. Tests read the counts before and
// after a call to check that a graph really ran compiled (tests/transforms/jit_*_test.cc).
#include <cstdint>
#include <string>

namespace spore::transforms {

struct JitRunStats {
  int64_t plan_runs = 0;         // calls that ran a lowered plan
  int64_t interpreted_runs = 0;  // calls that ran on the interpreter
};

/// Counts since the process started (every jit cache; Graph-mode transforms included).
JitRunStats jit_run_stats();

/// Why the latest interpreted jit call did not run a plan ("" before any): e.g. "SPORE_OPT_LEVEL=0",
/// "SPORE_EXECUTOR=interpreter", or "lowering failed: <the lowering's error>".
std::string last_interpreted_reason();

}  // namespace spore::transforms
