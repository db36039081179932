// SPDX-License-Identifier: Apache-2.0
#include "passes/plan_family.h"

#include <algorithm>
#include <numeric>
#include <sstream>

namespace spore::runtime {
namespace {

using passes::Affine;
using passes::AffineBufferLife;
using passes::ArenaBuffers;
using passes::BufferLife;

// What two plans of one family must agree on for one layout and one set of invariant results to
// serve both: every slot's kind, type and layout but its sizes, every step's primitive, kernel,
// operands and flags, and for an invariant step its attributes themselves (its results are
// shared, so it must be the same computation, not one bound to another size).
std::string structure_of(const Plan& plan) {
  // The slots invariant steps read or write (and the memory they view) are shared between the
  // sizes as they are: their whole geometry must match, not only their rank.
  std::vector<char> shared(plan.slots.size(), 0);
  for (const Step& st : plan.steps) {
    if (!st.invariant) continue;
    for (const auto* ids : {&st.in, &st.out})
      for (int32_t s : *ids) {
        shared[static_cast<size_t>(s)] = 1;
        const Slot& sl = plan.slots[static_cast<size_t>(s)];
        if (sl.kind == SlotKind::View) shared[static_cast<size_t>(sl.base)] = 1;
      }
  }
  std::ostringstream os;
  for (size_t i = 0; i < plan.slots.size(); ++i) {
    const Slot& s = plan.slots[i];
    os << static_cast<int>(s.kind) << ',' << static_cast<int>(s.dtype) << ',' << s.weak << s.channels_last << s.invariant
       << ',' << s.index << ',' << s.base << ',' << s.shape.size();
    if (shared[i]) {
      os << ':' << shape_str(s.shape) << shape_str(s.strides);
      if (s.kind == SlotKind::View) os << '+' << s.offset;
    }
    os << ';';
  }
  os << '|';
  for (const Step& st : plan.steps) {
    os << st.prim << ',' << st.kernel << ',' << st.invariant << ',' << (st.scratch_bytes > 0) << ':';
    // Its attributes themselves: lowering binds a copy only for attributes naming the symbol
    // (such steps are not invariant), and the graph, which the family lives no longer than,
    // holds the rest.
    if (st.invariant) os << st.attrs.get() << ':';
    for (int32_t s : st.in) os << s << ' ';
    os << "> ";
    for (int32_t s : st.out) os << s << ' ';
    os << ';';
  }
  os << '|';
  for (const PlanOutput& o : plan.outputs) os << o.slot << ',' << (o.updates ? *o.updates : -1) << ';';
  for (int32_t s : plan.invariant_inputs) os << s << ',';
  return os.str();
}

bool same_lifetimes(std::span<const BufferLife> a, std::span<const BufferLife> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].first != b[i].first || a[i].last != b[i].last) return false;
  return true;
}

// Bytes b1 at n1 and b2 at n2 as per * n + base; when no such line with per, base >= 0 passes
// through both, a bound above both: (ceil(max / min n)) * n.
Affine fit(int64_t n1, int64_t b1, int64_t n2, int64_t b2) {
  if ((b2 - b1) % (n2 - n1) == 0) {
    const int64_t per = (b2 - b1) / (n2 - n1), base = b1 - per * n1;
    if (per >= 0 && base >= 0) return {per, base};
  }
  const int64_t most = std::max(b1, b2), n = std::min(n1, n2);
  return {(most + n - 1) / n, 0};
}

}  // namespace

PlanFamily::PlanFamily()
    : pool_(make_arena_pool()), kept_reorders_(std::make_shared<KeptReorders>()), key_(next_plan_id()) {}

int PlanFamily::adopted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return adopted_;
}

bool PlanFamily::form(int64_t n, const std::string& structure, const ArenaBuffers& buffers) {
  const First& f = *first_;
  if (structure != f.structure || !same_lifetimes(f.lives, buffers.lives)) return false;
  const size_t count = buffers.lives.size();
  std::vector<AffineBufferLife> bounds(count);
  for (size_t i = 0; i < count; ++i) {
    const auto b1 = static_cast<int64_t>(f.lives[i].bytes), b2 = static_cast<int64_t>(buffers.lives[i].bytes);
    // An invariant result is shared by every size: it must not depend on the size.
    if (buffers.invariant[i] && b1 != b2) return false;
    bounds[i] = {fit(f.n, b1, n, b2), buffers.lives[i].first, buffers.lives[i].last};
  }
  bounds_ = std::move(bounds);
  invariant_ = buffers.invariant;
  reference_ = std::max(f.n, n);
  layout();
  structure_ = structure;
  return true;
}

void PlanFamily::layout() {
  // Invariant results first (constant sizes: constant offsets at the arena's start), then the
  // rest largest first at the reference size.
  const size_t count = bounds_.size();
  std::vector<size_t> order(count);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (invariant_[a] != invariant_[b]) return invariant_[a] > invariant_[b];
    if (invariant_[a]) return false;
    return bounds_[a].bytes.at(reference_) > bounds_[b].bytes.at(reference_);
  });
  std::vector<AffineBufferLife> placed(count);
  for (size_t i = 0; i < count; ++i) placed[i] = bounds_[order[i]];
  layout_ = passes::plan_memory_affine(placed, reference_);
  offsets_.assign(count, Affine{});
  size_t kept = 0;
  for (size_t i = 0; i < count; ++i) {
    offsets_[order[i]] = layout_.offsets[i];
    if (invariant_[order[i]]) {
      SPORE_ASSERT(layout_.ends[i].per == 0, "an invariant buffer of constant size got a size-dependent offset");
      kept = std::max(kept, static_cast<size_t>(layout_.ends[i].base));
    }
  }
  SPORE_ASSERT(kept_bytes_ == 0 || kept == kept_bytes_, "the invariant results moved when the layout was made again");
  kept_bytes_ = kept;
}

bool PlanFamily::adopt(Plan& plan, int64_t n, const ArenaBuffers& buffers) {
  std::lock_guard<std::mutex> lock(mu_);
  if (n < 1) return false;
  std::string structure = structure_of(plan);
  if (structure_.empty()) {
    // No layout yet: this size and the first, if they agree, make it; else this size is the
    // first of the next try (a batch of 1 that took other kernels does not block the rest).
    if (first_ && n != first_->n && form(n, structure, buffers)) {
      first_.reset();
    } else {
      if (!first_ || n != first_->n) first_ = First{n, std::move(structure), buffers.lives};
      return false;
    }
  } else if (structure != structure_) {
    return false;
  }
  // Over the same steps at this size; a buffer above its bound (a kernel's scratch need not be
  // affine in the size) raises the bound's base to it, and the layout is made again. Plans laid
  // out before keep theirs: the invariant results stay at the same offsets (placed first, with
  // the same sizes), and an arena serves one plan at a time. Everything is checked before
  // anything changes.
  if (buffers.lives.size() != bounds_.size()) return false;
  bool widen = false;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    const AffineBufferLife& b = bounds_[i];
    const BufferLife& l = buffers.lives[i];
    if (l.first != b.first || l.last != b.last) return false;
    if (static_cast<int64_t>(l.bytes) > b.bytes.at(n)) {
      if (buffers.invariant[i]) return false;  // same structure: an invariant size cannot change
      widen = true;
    }
  }
  if (widen) {
    for (size_t i = 0; i < bounds_.size(); ++i) {
      Affine& bytes = bounds_[i].bytes;
      bytes.base += std::max<int64_t>(0, static_cast<int64_t>(buffers.lives[i].bytes) - bytes.at(n));
    }
    layout();
  }
  size_t total = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    const auto off = static_cast<size_t>(offsets_[i].at(n));
    if (buffers.slot[i] >= 0) plan.slots[static_cast<size_t>(buffers.slot[i])].offset = off;
    else plan.steps[buffers.step[i]].scratch_offset = off;
    total += (buffers.lives[i].bytes + 63) & ~size_t{63};
  }
  plan.memory.arena_bytes = layout_.peak_at(n);
  plan.memory.intermediate_bytes = total;
  plan.pool = pool_;
  plan.invariant_key = key_;
  plan.kept_bytes = kept_bytes_;
  plan.kept_reorders = kept_reorders_;
  ++adopted_;
  return true;
}

}  // namespace spore::runtime
