// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include "core/primitive.h"

namespace spore {
namespace {
struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<Primitive>> owned;
  std::vector<Primitive*> by_id;
};
Registry& registry() {
  static Registry* r = new Registry();  // outlives static destructors of other TUs
  return *r;
}
}  // namespace

void Primitive::add_kernel(KernelDef k) {
  SPORE_ASSERT(k.run != nullptr || k.prepare != nullptr, "kernel ", k.name, " of ", name, " has no entry point");
  auto& list = kernels[static_cast<int>(k.device)];
  list.push_back(k);
  std::stable_sort(list.begin(), list.end(),
                   [](const KernelDef& a, const KernelDef& b) { return a.priority > b.priority; });
}

Primitive& register_primitive(Primitive p) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto* q : r.by_id)
    SPORE_ASSERT(q->name != p.name, "primitive '", p.name, "' registered twice");
  p.id = static_cast<uint16_t>(r.by_id.size());
  r.owned.push_back(std::make_unique<Primitive>(std::move(p)));
  r.by_id.push_back(r.owned.back().get());
  return *r.owned.back();
}

std::span<Primitive* const> all_primitives() {
  auto& r = registry();
  return {r.by_id.data(), r.by_id.size()};
}

Primitive* find_primitive(std::string_view name) {
  for (auto* p : all_primitives())
    if (p->name == name) return p;
  return nullptr;
}

}  // namespace spore
