// SPDX-License-Identifier: Apache-2.0
#pragma once
// An opt-in profile of compiled plans (the runtime's "profiler hooks", shared/ARCHITECTURE.md):
// with SPORE_PROFILE=plan in the environment, the executor times every step and, at exit,
// prints to stderr the time per primitive, kernel and input shapes, largest first. Off, it costs
// one load and a branch per plan call.
#include <chrono>
#include <cstdint>

#include "runtime/plan.h"

namespace spore::runtime::profile {

/// True when SPORE_PROFILE names "plan" (read once).
bool plan_enabled();

/// Adds one run of step `k` of `plan` that took `ns` nanoseconds. The row is labelled with the
/// variant the step's kernel noted while it ran (note_variant), else with the kernel's name.
void record_step(const Plan& plan, size_t k, int64_t ns);

/// Called by a kernel that decides per call how it runs (a fused node: its compiled kernel once
/// the background compile is done, the loop interpreter until then), naming what ran; a static
/// string, or null to clear. The executor clears it before each profiled step. One thread-local
/// store: cheap enough to call unconditionally.
void note_variant(const char* name);
/// The variant noted on this thread since it was last cleared, or null (tests).
const char* noted_variant();

/// Nanoseconds on a steady clock, for the caller's start/stop around a step.
inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace spore::runtime::profile
