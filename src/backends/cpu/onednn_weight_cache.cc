// SPDX-License-Identifier: Apache-2.0
#include "backends/cpu/onednn_weight_cache.h"

#include <mutex>
#include <vector>

namespace spore::cpu::onednn {
namespace {

struct Kept {
  const void* data;
  uint64_t stamp;  // a version stamp: unique per content of the memory at `data`
  dnnl::memory::desc user, desc;
  std::weak_ptr<Storage> memory;  // the kernels that use it own it
};

std::mutex g_mu;
std::vector<Kept> g_kept;

}  // namespace

std::shared_ptr<Storage> find_kept(const void* data, uint64_t stamp, const dnnl::memory::desc& user,
                                   const dnnl::memory::desc& desc) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (const Kept& k : g_kept)
    if (k.data == data && k.stamp == stamp && k.user == user && k.desc == desc)
      if (auto m = k.memory.lock()) return m;
  return nullptr;
}

void share_kept(const void* data, uint64_t stamp, const dnnl::memory::desc& user, const dnnl::memory::desc& desc,
                const std::shared_ptr<Storage>& memory) {
  std::lock_guard<std::mutex> lock(g_mu);
  // Entries no kernel holds any more, or for weights since changed, go first.
  std::erase_if(g_kept, [&](const Kept& k) { return k.memory.expired() || (k.data == data && k.user == user && k.desc == desc); });
  g_kept.push_back({data, stamp, user, desc, memory});
}

}  // namespace spore::cpu::onednn
