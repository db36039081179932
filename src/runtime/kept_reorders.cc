// SPDX-License-Identifier: Apache-2.0
#include "runtime/kept_reorders.h"

#include <algorithm>

namespace spore::runtime {

std::shared_ptr<Storage> KeptReorders::find(const void* data, uint64_t stamp, std::string_view layout) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(entries_, [](const Entry& e) { return e.memory.expired(); });
  for (const Entry& e : entries_)
    if (e.data == data && e.stamp == stamp && e.layout == layout)
      if (auto m = e.memory.lock()) return m;
  return nullptr;
}

void KeptReorders::share(const void* data, uint64_t stamp, std::string layout, const std::shared_ptr<Storage>& memory) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(entries_, [&](const Entry& e) { return e.memory.expired() || (e.data == data && e.layout == layout); });
  entries_.push_back({data, stamp, std::move(layout), memory});
}

}  // namespace spore::runtime
