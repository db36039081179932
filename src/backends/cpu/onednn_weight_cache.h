// SPDX-License-Identifier: Apache-2.0
#pragma once
// Kept weights for prepared oneDNN kernels (private to src/backends/cpu/onednn_*): a weight that
// stays the same between calls (the same pointer and storage version: KernelContext::
// input_stamps) is reordered into the kernel's layout once, into memory the kernel keeps. A pair
// of calls with one stamp is needed before the copy is made, so a training step, whose weights
// change every call, never makes one (and keeps its memory peak). One per prepared kernel, which
// is never used by two calls at once (per thread in PyNative, per workspace in plans); a kept
// reorder is shared with the other kernels of the plan's family asking for the same one (the
// same conv at another size: runtime/kept_reorders.h).
#include <memory>

#include <string>

#include "backends/cpu/onednn_common.h"
#include "runtime/kept_reorders.h"
#include "spore/tensor.h"

namespace spore::cpu::onednn {

namespace detail {
// The reorder's identity among kept ones: the source and target layouts' descriptions (bytes of
// oneDNN's plain descriptor structs: equal bytes are equal layouts).
inline std::string reorder_key(const dnnl::memory::desc& user, const dnnl::memory::desc& desc) {
  std::string k(reinterpret_cast<const char*>(&user.data), sizeof(user.data));
  k.append(reinterpret_cast<const char*>(&desc.data), sizeof(desc.data));
  return k;
}
}  // namespace detail

class WeightCache {
 public:
  /// For weights `w` (stamp from the caller, 0: unknown) in layout `user`, reordered into `desc`
  /// under the layout choice `key`: when the weights look unchanged, points `wei` at the kept
  /// memory. Returns true when that memory already holds them; false when the caller must
  /// reorder into `wei` (kept memory or, on a first sight, the scratch `wei` already pointed at).
  bool use(const Buffer& w, uint64_t stamp, const void* key, const dnnl::memory::desc& user,
           const dnnl::memory::desc& desc, dnnl::memory& wei) {
    if (stamp == 0) return false;
    const bool same = data_ == w.data && stamp_ == stamp && key_ == key;
    data_ = w.data, stamp_ = stamp, key_ = key;
    if (!same) {
      valid_ = false;
      // Memory other kernels were offered is never written again: they may still read it.
      if (shared_) memory_.reset(), shared_ = false;
      // Another kernel of the plan's family made this reorder already (and checked it: below).
      runtime::KeptReorders* shared = runtime::tls_kept_reorders;
      if (auto kept = shared ? shared->find(w.data, stamp, detail::reorder_key(user, desc)) : nullptr) {
        memory_ = std::move(kept);
        valid_ = shared_ = true;
        wei = wrap(desc, memory_->data());
        return true;
      }
      return false;
    }
    // From the caching allocator (64-byte aligned, counted by memory_stats, under the cap).
    if (!memory_ || memory_->nbytes() < desc.get_size()) memory_ = std::make_shared<Storage>(kCPU, desc.get_size());
    wei = wrap(desc, memory_->data());
    if (valid_) {
      // Filled by an earlier call of this kernel, which has returned: safe to offer.
      if (!shared_ && runtime::tls_kept_reorders != nullptr) {
        runtime::tls_kept_reorders->share(w.data, stamp, detail::reorder_key(user, desc), memory_);
        shared_ = true;
      }
      return true;
    }
    valid_ = true;  // the caller reorders into it this once
    return false;
  }

 private:
  const void* data_ = nullptr;
  uint64_t stamp_ = 0;
  const void* key_ = nullptr;
  bool valid_ = false;   // memory_ holds the reordered weights of (data_, stamp_, key_)
  bool shared_ = false;  // memory_ was offered to (or taken from) other kernels: read only
  std::shared_ptr<Storage> memory_;
};

}  // namespace spore::cpu::onednn
