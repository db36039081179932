// SPDX-License-Identifier: Apache-2.0
#pragma once
// The node contract: how a node is read. A stream yields blocks of one epoch; a random-access
// node can also be asked for any rows (Dataset::gather). Index-remapping nodes (shuffle, take,
// skip, shard, split) push their order down to a random-access child, so the rows are read once,
// where they live, and a parallel map below them still gets whole blocks to share out.
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "spore/data/dataset.h"

namespace spore::data {

/// What to read in one epoch.
struct StreamPlan {
  uint64_t epoch = 0;
  /// Random-access nodes: the rows to read, in this order; null reads 0..size()-1.
  std::shared_ptr<const std::vector<int64_t>> order;
  /// Preferred rows per block (batch asks for its batch size, so its blocks need no copy).
  int64_t block = 256;
};

/// Blocks of one epoch, in order; nullopt at the end (and on every call after it).
class BlockStream {
 public:
  virtual ~BlockStream() = default;
  virtual std::optional<Block> next() = 0;
};

/// Rows a plan reads from a random-access node of known size.
inline int64_t plan_rows(const Dataset& ds, const StreamPlan& plan) {
  return plan.order ? static_cast<int64_t>(plan.order->size()) : ds.size();
}
/// The plan's row indices [start, stop) into `out`.
void plan_indices(const StreamPlan& plan, int64_t start, int64_t stop, std::vector<int64_t>& out);
/// The order a random-access node of `size` rows reads: plan's order, or 0..size-1, through `f`.
template <class F>
std::shared_ptr<const std::vector<int64_t>> remap_order(const StreamPlan& plan, int64_t size, F&& f) {
  auto out = std::make_shared<std::vector<int64_t>>();
  const int64_t n = plan.order ? static_cast<int64_t>(plan.order->size()) : size;
  out->resize(n);
  for (int64_t i = 0; i < n; ++i) (*out)[i] = f(plan.order ? (*plan.order)[i] : i);
  return out;
}

/// Adds the time of a scope to a counter.
class WorkTimer {
 public:
  explicit WorkTimer(std::atomic<int64_t>& ns) : ns_(ns), t0_(std::chrono::steady_clock::now()) {}
  ~WorkTimer() {
    ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0_).count(),
                  std::memory_order_relaxed);
  }
  WorkTimer(const WorkTimer&) = delete;
  WorkTimer& operator=(const WorkTimer&) = delete;

 private:
  std::atomic<int64_t>& ns_;
  std::chrono::steady_clock::time_point t0_;
};

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace spore::data
