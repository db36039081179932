// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cstddef>

#include "spore/memory.h"

namespace spore::runtime {

/// A device memory allocator. Blocks are 64-byte aligned.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t nbytes) = 0;
  /// `nbytes` must be the size passed to allocate().
  virtual void deallocate(void* p, size_t nbytes) = 0;
  virtual MemoryStats stats() const = 0;
  virtual void reset_peak() = 0;
  virtual void empty_cache() = 0;
  virtual void set_limit(size_t bytes) = 0;
  virtual size_t limit() const = 0;
};

Allocator& allocator_for(Device device);

/// Bounds the bytes this thread may allocate while the budget lives: untrusted work such as
/// evaluating a model file's constant expressions at load time, where a 100-byte file can ask
/// for a 14 GB ConstantOfShape. A request past the budget throws OutOfMemoryError naming `what`
/// before anything is allocated. Frees give nothing back (it bounds work, not the peak); budgets
/// nest, and the innermost one is charged first.
class AllocationBudget {
 public:
  AllocationBudget(size_t bytes, const char* what);
  ~AllocationBudget();
  AllocationBudget(const AllocationBudget&) = delete;
  AllocationBudget& operator=(const AllocationBudget&) = delete;
  /// Charges `bytes` to every budget open on this thread; the allocators call it.
  static void charge(size_t bytes);

 private:
  size_t left_;
  const char* what_;
  AllocationBudget* outer_;
};

/// RAII scratch memory for one kernel call.
class ScratchBuffer {
 public:
  ScratchBuffer(Allocator& a, size_t nbytes) : a_(a), n_(nbytes), p_(nbytes ? a.allocate(nbytes) : nullptr) {}
  ~ScratchBuffer() {
    if (p_) a_.deallocate(p_, n_);
  }
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  void* get() const { return p_; }

 private:
  Allocator& a_;
  size_t n_;
  void* p_;
};

}  // namespace spore::runtime
