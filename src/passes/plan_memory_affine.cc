// SPDX-License-Identifier: Apache-2.0
#include "passes/plan_memory_affine.h"

#include <algorithm>

#include "spore/error.h"

namespace spore::passes {
namespace {

// f(n) <= g(n) for every n >= 1.
bool below(const Affine& f, const Affine& g) { return f.per <= g.per && f.at(1) <= g.at(1); }

Affine plus(const Affine& a, const Affine& b) { return {a.per + b.per, a.base + b.base}; }

}  // namespace

size_t AffineLayout::peak_at(int64_t n) const {
  int64_t peak = 0;
  for (const Affine& e : ends) peak = std::max(peak, e.at(n));
  return static_cast<size_t>(peak);
}

AffineLayout plan_memory_affine(std::span<const AffineBufferLife> buffers, int64_t reference, size_t align) {
  SPORE_ASSERT(align > 0 && (align & (align - 1)) == 0, "alignment ", align, " is not a power of two");
  SPORE_ASSERT(reference >= 1, "reference size ", reference, " is below 1");
  const auto a = static_cast<int64_t>(align);
  auto up = [&](int64_t v) { return (v + a - 1) / a * a; };
  AffineLayout layout;
  layout.offsets.assign(buffers.size(), Affine{});
  layout.ends.assign(buffers.size(), Affine{});
  std::vector<size_t> live;  // placed buffers whose lifetime overlaps the one being placed
  std::vector<Affine> candidates;
  for (size_t id = 0; id < buffers.size(); ++id) {
    const AffineBufferLife& b = buffers[id];
    SPORE_ASSERT(b.bytes.per >= 0 && b.bytes.base >= 0 && b.first <= b.last, "buffer ", id, " has bytes ", b.bytes.per,
                 " * n + ", b.bytes.base, " over steps ", b.first, "..", b.last);
    // Aligned at every n: both coefficients rounded up (a bound on the aligned size).
    const Affine size{up(b.bytes.per), up(b.bytes.base)};
    if (size.per == 0 && size.base == 0) continue;  // an empty tensor needs an address, not bytes
    live.clear();
    for (size_t q = 0; q < id; ++q)
      if (buffers[q].first <= b.last && b.first <= buffers[q].last && !(layout.ends[q] == layout.offsets[q]))
        live.push_back(q);
    // Above every live buffer at every n: the highest slope, and the highest end at n = 1.
    Affine top{0, 0};
    int64_t top1 = 0;
    for (size_t q : live) top.per = std::max(top.per, layout.ends[q].per), top1 = std::max(top1, layout.ends[q].at(1));
    top.base = top1 - top.per;  // >= 0: the buffer of the highest slope ends at least that high at n = 1
    // The lowest-ending candidate that clears every live buffer at every n wins.
    candidates.assign(1, Affine{0, 0});
    for (size_t q : live) candidates.push_back(layout.ends[q]);
    std::sort(candidates.begin(), candidates.end(),
              [&](const Affine& x, const Affine& y) { return x.at(reference) < y.at(reference); });
    Affine best = top;
    for (const Affine& c : candidates) {
      const Affine end = plus(c, size);
      if (end.at(reference) >= plus(top, size).at(reference)) break;
      bool clear = true;
      for (size_t q = 0; clear && q < live.size(); ++q)
        clear = below(end, layout.offsets[live[q]]) || below(layout.ends[live[q]], c);
      if (clear) {
        best = c;
        break;
      }
    }
    layout.offsets[id] = best;
    layout.ends[id] = plus(best, size);
  }
  return layout;
}

}  // namespace spore::passes
