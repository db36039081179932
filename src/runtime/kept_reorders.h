// SPDX-License-Identifier: Apache-2.0
#pragma once
// Weights that prepared kernels keep reordered into their own layout (oneDNN's blocked conv
// weights; src/backends/cpu/onednn_weight_cache.h), shared between the kernels of the plans of
// one family (passes/plan_family.h): the same conv at several batch sizes has a kernel per
// size, and each would otherwise keep its own copy of the same weights. One per family, reached
// through the per-thread context: the executor points tls_kept_reorders at the running plan's
// for the call (null outside a family's plans, where nothing is shared).
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "spore/tensor.h"

namespace spore::runtime {

class KeptReorders {
 public:
  /// The memory holding `data` at version `stamp` reordered as `layout` (the kernel's
  /// description of source and target layouts), when a kernel made it and still holds it.
  std::shared_ptr<Storage> find(const void* data, uint64_t stamp, std::string_view layout) const;
  /// Offers `memory`, which holds that reorder and is never written again, to other kernels;
  /// replaces an earlier offer for the same weights and layout.
  void share(const void* data, uint64_t stamp, std::string layout, const std::shared_ptr<Storage>& memory);

 private:
  struct Entry {
    const void* data;
    uint64_t stamp;  // a version stamp: unique per content of the memory at `data`
    std::string layout;
    std::weak_ptr<Storage> memory;  // owned by the kernels that use it
  };
  mutable std::mutex mu_;
  mutable std::vector<Entry> entries_;
};

/// The running plan's KeptReorders (set by the executor for the call), or null.
inline thread_local KeptReorders* tls_kept_reorders = nullptr;

}  // namespace spore::runtime
