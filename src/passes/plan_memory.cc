// SPDX-License-Identifier: Apache-2.0
#include "passes/plan_memory.h"

#include <algorithm>
#include <numeric>

#include "spore/error.h"

namespace spore::passes {

MemoryLayout plan_memory(std::span<const BufferLife> buffers, size_t align) {
  SPORE_ASSERT(align > 0 && (align & (align - 1)) == 0, "alignment ", align, " is not a power of two");
  const size_t n = buffers.size();
  auto aligned = [&](size_t b) { return (b + align - 1) & ~(align - 1); };
  MemoryLayout layout;
  layout.offsets.assign(n, 0);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  // Largest first; ties by first use keep the layout deterministic.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });
  struct Placed {
    size_t begin, end;
  };
  std::vector<size_t> placed;  // buffer ids, in placement order
  std::vector<Placed> busy;
  for (size_t id : order) {
    const BufferLife& b = buffers[id];
    SPORE_ASSERT(b.first <= b.last, "buffer ", id, " dies (step ", b.last, ") before it is made (step ", b.first, ")");
    const size_t size = aligned(b.bytes);
    layout.total += size;
    if (size == 0) continue;  // an empty tensor needs an address, not bytes
    busy.clear();
    for (size_t q : placed) {
      const BufferLife& o = buffers[q];
      if (o.first <= b.last && b.first <= o.last) busy.push_back({layout.offsets[q], layout.offsets[q] + aligned(o.bytes)});
    }
    std::sort(busy.begin(), busy.end(), [](const Placed& x, const Placed& y) { return x.begin < y.begin; });
    size_t best = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
    for (const Placed& p : busy) {
      if (p.begin > cursor && p.begin - cursor >= size && p.begin - cursor < best_gap) {
        best = cursor;
        best_gap = p.begin - cursor;
      }
      cursor = std::max(cursor, p.end);
    }
    const size_t offset = best != SIZE_MAX ? best : cursor;
    layout.offsets[id] = offset;
    layout.peak = std::max(layout.peak, offset + size);
    placed.push_back(id);
  }
  return layout;
}

}  // namespace spore::passes
