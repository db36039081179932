// SPDX-License-Identifier: Apache-2.0
#pragma once
// Flags that select which graph a traced function builds, such as a Cell's training mode
// (Dropout and BatchNorm trace differently in train and eval). Reading a GuardedFlag while jit
// traces records a guard on its value in that trace's cache entry; a later call finds the entry
// only while every guard still holds, and otherwise traces again (SPORE_LOG=jit says so). So
// switching a network between train() and eval() can never run a graph traced for the other
// mode, and switching back reuses the first graph.
#include <atomic>
#include <memory>

namespace spore {

class GuardedFlag {
 public:
  explicit GuardedFlag(bool value) : v_(std::make_shared<std::atomic<bool>>(value)) {}
  /// The value; inside a jit trace, also a guard on it.
  bool get() const;
  void set(bool value) { v_->store(value, std::memory_order_relaxed); }

 private:
  std::shared_ptr<std::atomic<bool>> v_;
};

namespace transforms {
/// Adds a guard to the jit trace open on this thread, if any (GuardedFlag::get calls it).
void record_guard(const std::shared_ptr<const std::atomic<bool>>& flag, bool value);
}  // namespace transforms

inline bool GuardedFlag::get() const {
  const bool v = v_->load(std::memory_order_relaxed);
  transforms::record_guard(v_, v);
  return v;
}

}  // namespace spore
