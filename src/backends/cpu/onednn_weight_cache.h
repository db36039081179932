// SPDX-License-Identifier: Apache-2.0
#pragma once
// Kept weights for prepared oneDNN kernels (private to src/backends/cpu/onednn_*): a weight that
// stays the same between calls (the same pointer and storage version: KernelContext::
// input_stamps) is reordered into the kernel's layout once, into memory the kernel keeps. A pair
// of calls with one stamp is needed before the copy is made, so a training step, whose weights
// change every call, never makes one (and keeps its memory peak). One per prepared kernel, which
// is never used by two calls at once (per thread in PyNative, per workspace in plans).
#include <memory>

#include "backends/cpu/onednn_common.h"
#include "spore/tensor.h"

namespace spore::cpu::onednn {

class WeightCache {
 public:
  /// For weights `w` (stamp from the caller, 0: unknown) reordered into `desc` under the layout
  /// choice `key`: when the weights look unchanged, points `wei` at the kept memory. Returns true
  /// when that memory already holds them; false when the caller must reorder into `wei` (kept
  /// memory or, on a first sight, the scratch `wei` already pointed at).
  bool use(const Buffer& w, uint64_t stamp, const void* key, const dnnl::memory::desc& desc, dnnl::memory& wei) {
    if (stamp == 0) return false;
    const bool same = data_ == w.data && stamp_ == stamp && key_ == key;
    data_ = w.data, stamp_ = stamp, key_ = key;
    if (!same) {
      valid_ = false;
      return false;
    }
    // From the caching allocator (64-byte aligned, counted by memory_stats, under the cap).
    if (!memory_ || memory_->nbytes() < desc.get_size()) memory_ = std::make_shared<Storage>(kCPU, desc.get_size());
    wei = wrap(desc, memory_->data());
    if (valid_) return true;
    valid_ = true;  // the caller reorders into it this once
    return false;
  }

 private:
  const void* data_ = nullptr;
  uint64_t stamp_ = 0;
  const void* key_ = nullptr;
  bool valid_ = false;  // memory_ holds the reordered weights of (data_, stamp_, key_)
  std::shared_ptr<Storage> memory_;
};

}  // namespace spore::cpu::onednn
