// SPDX-License-Identifier: Apache-2.0
#include "passes/plan_memory.h"

#include <algorithm>
#include <numeric>

#include "spore/error.h"

namespace spore::passes {
namespace {

struct Range {
  size_t begin, end;
};

// Places the buffers in `order`, each at the best fit among the buffers placed before it whose
// lifetimes overlap its own (the smallest gap it fits), else above them all.
MemoryLayout place(std::span<const BufferLife> buffers, std::span<const size_t> order, size_t align) {
  auto aligned = [&](size_t b) { return (b + align - 1) & ~(align - 1); };
  MemoryLayout layout;
  layout.offsets.assign(buffers.size(), 0);
  std::vector<size_t> placed;
  std::vector<Range> busy;
  for (size_t id : order) {
    const BufferLife& b = buffers[id];
    const size_t size = aligned(b.bytes);
    layout.total += size;
    if (size == 0) continue;  // an empty tensor needs an address, not bytes
    busy.clear();
    for (size_t q : placed) {
      const BufferLife& o = buffers[q];
      if (o.first <= b.last && b.first <= o.last) busy.push_back({layout.offsets[q], layout.offsets[q] + aligned(o.bytes)});
    }
    std::sort(busy.begin(), busy.end(), [](const Range& x, const Range& y) { return x.begin < y.begin; });
    size_t best = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
    for (const Range& p : busy) {
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

}  // namespace

// Best fit depends on the order the buffers are placed in, and no one order wins on every
// graph: largest first packs a few big values well; by breadth (the buffers of the step with
// the most bytes live first, then of the next fullest step, as TensorFlow Lite's planner does)
// fits the peak steps tightly, which matters when many mid-sized values are live across the
// peak, as in a training step's saved activations (ResNet-18: 395 MiB largest first, 341 MiB by
// breadth, against 334 MiB live at its fullest step). Each order is tried and the smallest arena
// kept; placing ~1000 buffers takes a few milliseconds.
MemoryLayout plan_memory(std::span<const BufferLife> buffers, size_t align) {
  SPORE_ASSERT(align > 0 && (align & (align - 1)) == 0, "alignment ", align, " is not a power of two");
  const size_t n = buffers.size();
  auto aligned = [&](size_t b) { return (b + align - 1) & ~(align - 1); };
  int64_t steps = 0;
  for (size_t i = 0; i < n; ++i) {
    SPORE_ASSERT(buffers[i].first <= buffers[i].last, "buffer ", i, " dies (step ", buffers[i].last,
                 ") before it is made (step ", buffers[i].first, ")");
    SPORE_ASSERT(buffers[i].first >= 0, "buffer ", i, " is made at step ", buffers[i].first);
    steps = std::max(steps, buffers[i].last + 1);
  }
  // Bytes live at each step (a difference array), and its maximum: no layout is below it.
  std::vector<size_t> live(static_cast<size_t>(steps) + 1, 0);
  for (const BufferLife& b : buffers) {
    live[static_cast<size_t>(b.first)] += aligned(b.bytes);
    live[static_cast<size_t>(b.last) + 1] -= aligned(b.bytes);
  }
  for (size_t k = 1; k < live.size(); ++k) live[k] += live[k - 1];
  const size_t floor = live.empty() ? 0 : *std::max_element(live.begin(), live.end());

  std::vector<size_t> by_size(n);
  std::iota(by_size.begin(), by_size.end(), size_t{0});
  // Largest first; ties by first use keep the layout deterministic.
  std::stable_sort(by_size.begin(), by_size.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });
  MemoryLayout best = place(buffers, by_size, align);
  if (best.peak <= floor) return best;

  // By breadth: steps from the fullest down; at each, its buffers not yet taken, largest first.
  std::vector<size_t> step_order(static_cast<size_t>(steps));
  std::iota(step_order.begin(), step_order.end(), size_t{0});
  std::stable_sort(step_order.begin(), step_order.end(), [&](size_t a, size_t b) { return live[a] > live[b]; });
  // A buffer's rank: the place in that order of the fullest step it is live at.
  std::vector<size_t> rank_of_step(static_cast<size_t>(steps));
  for (size_t r = 0; r < step_order.size(); ++r) rank_of_step[step_order[r]] = r;
  std::vector<size_t> rank(n, SIZE_MAX);
  for (size_t id = 0; id < n; ++id)
    for (int64_t k = buffers[id].first; k <= buffers[id].last; ++k)
      rank[id] = std::min(rank[id], rank_of_step[static_cast<size_t>(k)]);
  std::vector<size_t> by_breadth = by_size;
  std::stable_sort(by_breadth.begin(), by_breadth.end(), [&](size_t a, size_t b) { return rank[a] < rank[b]; });
  MemoryLayout b = place(buffers, by_breadth, align);
  if (b.peak < best.peak) best = std::move(b);
  return best;
}

}  // namespace spore::passes
