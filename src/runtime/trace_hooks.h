// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where dispatch hands ops to open traces and tapes (shared/ARCHITECTURE.md, "One path for
// both modes"). The tracing layer (src/ir, src/autodiff) installs the hooks; with no trace open
// in this thread, dispatch pays one thread-local load and a branch.
#include <span>

#include "core/primitive.h"

namespace spore::runtime {

struct Outputs;

struct TraceHooks {
  /// Under a symbolic trace: build outputs of the given types without running anything.
  /// Returns false to let the op run eagerly (no symbolic trace tracks its inputs).
  bool (*symbolic)(const Primitive& p, const void* attrs, std::span<const Tensor> in,
                   const OutTypes& types, Outputs& out) = nullptr;
  /// After an eager run: record the op into each open tape that tracks one of its inputs.
  void (*record)(const Primitive& p, const void* attrs, std::span<const Tensor> in,
                 std::span<const Tensor> out) = nullptr;
  /// An input carries trace membership but this thread has no open trace: throws if it belongs
  /// to a trace or tape open in another thread (transforms are per thread).
  void (*foreign)(const Primitive& p, const Tensor& t) = nullptr;
  /// An in-place write of `value` into `dst` (`op` names the op for messages). Under a symbolic
  /// trace the write is functionalized (later reads see the new value; a graph input written
  /// becomes state, "updates input j") and this returns true; with no symbolic trace active it
  /// returns false and the caller writes eagerly. Throws when a tape or jvp frame inside the
  /// trace tracks `dst` or `value`, unless `untracked_ok` (statistics: never differentiated, as
  /// in PyNative).
  bool (*write)(const Tensor& dst, const Tensor& value, const char* op, bool untracked_ok) = nullptr;
};

/// Number of traces and tapes open in this thread.
inline thread_local int tls_open_traces = 0;

/// While alive, ops that update running statistics in place (BatchNorm) leave them as they are:
/// a recomputation (checkpoint's backward) replays a forward whose updates were already made.
inline thread_local int tls_statistics_frozen = 0;
struct StatisticsFrozen {
  StatisticsFrozen() { ++tls_statistics_frozen; }
  ~StatisticsFrozen() { --tls_statistics_frozen; }
  StatisticsFrozen(const StatisticsFrozen&) = delete;
  StatisticsFrozen& operator=(const StatisticsFrozen&) = delete;
};

void set_trace_hooks(const TraceHooks& hooks);
const TraceHooks& trace_hooks();

}  // namespace spore::runtime
