// SPDX-License-Identifier: Apache-2.0
// The CPU caching allocator. Requests round up to a size class (64-byte steps up to 1 KiB, then
// four classes per power of two, so at most 25% is wasted, and whole 2 MiB pages from 64 MiB
// up); freed blocks stay cached per class,
// so a steady training loop reuses the same blocks and makes no system allocations. Blocks of
// 1 MiB and more come from mmap with transparent huge pages requested: fresh large outputs are
// the page-fault cost that dominates big elementwise ops.
#include <sys/mman.h>

#include <bit>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/allocator.h"
#include "spore/error.h"

namespace spore::runtime {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kMmapThreshold = size_t{1} << 20;

// From here up, requests round to whole 2 MiB (huge) pages rather than to a quarter of their
// power of two: the largest blocks are a compiled plan's arena, allocated once per workspace,
// where the classes wasted up to 64 MiB (a ResNet-18 training step's 395 MiB arena took a
// 448 MiB block).
constexpr size_t kPageClassThreshold = size_t{64} << 20;
constexpr size_t kHugePage = size_t{2} << 20;

size_t size_class(size_t n) {
  if (n == 0) n = 1;
  if (n <= 1024) return (n + kAlign - 1) & ~(kAlign - 1);
  if (n >= kPageClassThreshold) return (n + kHugePage - 1) / kHugePage * kHugePage;
  size_t p = std::bit_floor(n - 1);  // n in (p, 2p]
  size_t step = p / 4;
  return (n + step - 1) / step * step;
}

std::string human(size_t b) {
  char buf[64];
  if (b >= (size_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", b / double(1 << 30));
  else if (b >= (size_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", b / double(1 << 20));
  else std::snprintf(buf, sizeof buf, "%zu bytes", b);
  return buf;
}

size_t parse_limit(const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  SPORE_CHECK(end != s && v >= 0, "[memory] SPORE_MEMORY_LIMIT='", s,
              "' is not a size; use bytes or a number with K, M or G (e.g. 2G)");
  switch (*end) {
    case 'k': case 'K': v *= 1024.0; break;
    case 'm': case 'M': v *= 1024.0 * 1024; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
    case '\0': break;
    default:
      throw Error(detail::cat("[memory] SPORE_MEMORY_LIMIT='", s, "' has an unknown suffix; use K, M or G"));
  }
  SPORE_CHECK(v < 9.2e18, "[memory] SPORE_MEMORY_LIMIT='", s, "' is larger than any memory; unset it for no cap");
  return static_cast<size_t>(v);
}

thread_local AllocationBudget* innermost_budget = nullptr;

}  // namespace

AllocationBudget::AllocationBudget(size_t bytes, const char* what)
    : left_(bytes), what_(what), outer_(innermost_budget) {
  innermost_budget = this;
}

AllocationBudget::~AllocationBudget() { innermost_budget = outer_; }

void AllocationBudget::charge(size_t bytes) {
  for (AllocationBudget* b = innermost_budget; b != nullptr; b = b->outer_)
    if (bytes > b->left_)
      throw OutOfMemoryError(detail::cat("[memory] ", b->what_, " may allocate ", human(b->left_),
                                         " more, and a request of ", human(bytes), " would pass that budget"));
  for (AllocationBudget* b = innermost_budget; b != nullptr; b = b->outer_) b->left_ -= bytes;
}

namespace {

class CachingAllocator final : public Allocator {
 public:
  CachingAllocator() {
    if (const char* s = std::getenv("SPORE_MEMORY_LIMIT"); s && *s) limit_ = parse_limit(s);
  }
  ~CachingAllocator() override { empty_cache(); }

  void* allocate(size_t nbytes) override {
    size_t cls = size_class(nbytes);
    AllocationBudget::charge(cls);
    std::lock_guard<std::mutex> lock(mu_);
    const bool large = cls >= kPageClassThreshold;
    // A large request may take a cached block up to 1/8 larger: page-sized classes are fine
    // grained, and shapes that vary a little between calls should still reuse their blocks.
    if (large && free_[cls].empty())
      for (size_t c = cls + kHugePage; c <= cls + cls / 8; c += kHugePage)
        if (auto it = free_.find(c); it != free_.end() && !it->second.empty()) {
          cls = c;
          break;
        }
    auto& list = free_[cls];
    void* p;
    if (!list.empty()) {
      p = list.back();
      list.pop_back();
      stats_.bytes_cached -= cls;
    } else {
      if (limit_ && stats_.bytes_in_use + stats_.bytes_cached + cls > limit_) release_cached_locked();
      if (limit_ && stats_.bytes_in_use + cls > limit_)
        throw OutOfMemoryError(detail::cat(
            "[memory] out of memory: a request of ", human(nbytes), " would bring memory in use to ",
            human(stats_.bytes_in_use + cls), ", over the cap of ", human(limit_),
            "; raise SPORE_MEMORY_LIMIT / set_memory_limit() or use smaller batches"));
      p = system_alloc(cls);
      if (!p)
        throw OutOfMemoryError(detail::cat("[memory] out of memory: the system refused ", human(cls),
                                           " (", human(stats_.bytes_in_use), " in use)"));
      ++stats_.system_allocations;
    }
    stats_.bytes_in_use += cls;
    stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
    if (large) large_block_[p] = cls;
    return p;
  }

  void deallocate(void* p, size_t nbytes) override {
    if (!p) return;
    size_t cls = size_class(nbytes);
    std::lock_guard<std::mutex> lock(mu_);
    if (cls >= kPageClassThreshold) {  // the block may be larger than the request's class
      auto it = large_block_.find(p);
      SPORE_ASSERT(it != large_block_.end(), "caching allocator: freeing an unknown large block");
      cls = it->second;
      large_block_.erase(it);
    }
    stats_.bytes_in_use -= cls;
    free_[cls].push_back(p);
    stats_.bytes_cached += cls;
  }

  MemoryStats stats() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }
  void reset_peak() override {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.peak_bytes_in_use = stats_.bytes_in_use;
  }
  void empty_cache() override {
    std::lock_guard<std::mutex> lock(mu_);
    release_cached_locked();
  }
  void set_limit(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    limit_ = bytes;
  }
  size_t limit() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return limit_;
  }

 private:
  static void* system_alloc(size_t cls) {
    if (cls >= kMmapThreshold) {
      void* p = mmap(nullptr, cls, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) return nullptr;
      madvise(p, cls, MADV_HUGEPAGE);
      return p;
    }
    return std::aligned_alloc(kAlign, cls);
  }
  static void system_free(void* p, size_t cls) {
    if (cls >= kMmapThreshold) munmap(p, cls);
    else std::free(p);
  }
  void release_cached_locked() {
    for (auto& [cls, list] : free_) {
      for (void* p : list) {
        system_free(p, cls);
        ++stats_.system_frees;
      }
      stats_.bytes_cached -= cls * list.size();
      list.clear();
    }
  }

  mutable std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  std::unordered_map<void*, size_t> large_block_;  // block size of each large block in use
  MemoryStats stats_;
  size_t limit_ = 0;
};

/// The meta device holds types only: its "allocations" are never touched.
class MetaAllocator final : public Allocator {
 public:
  void* allocate(size_t) override { return nullptr; }
  void deallocate(void*, size_t) override {}
  MemoryStats stats() const override { return {}; }
  void reset_peak() override {}
  void empty_cache() override {}
  void set_limit(size_t) override {}
  size_t limit() const override { return 0; }
};

}  // namespace

Allocator& allocator_for(Device device) {
  // Leaked on purpose: tensors in static storage may be freed after main returns.
  static auto* cpu = new CachingAllocator();
  static auto* meta = new MetaAllocator();
  return device.type == DeviceType::CPU ? static_cast<Allocator&>(*cpu) : *meta;
}

}  // namespace spore::runtime

namespace spore {
MemoryStats memory_stats(Device d) { return runtime::allocator_for(d).stats(); }
void reset_peak_memory_stats(Device d) { runtime::allocator_for(d).reset_peak(); }
void empty_cache(Device d) { runtime::allocator_for(d).empty_cache(); }
void set_memory_limit(size_t bytes, Device d) { runtime::allocator_for(d).set_limit(bytes); }
size_t memory_limit(Device d) { return runtime::allocator_for(d).limit(); }
}  // namespace spore
