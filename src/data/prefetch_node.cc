// SPDX-License-Identifier: Apache-2.0
// prefetch: a background thread runs the child's stream into a bounded queue. Its statistics
// show which side waits: a consumer that waits means the pipeline is the bottleneck.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "data/nodes.h"
#include "data/stream.h"

namespace spore::data {
namespace {

struct PrefetchCounters {
  std::atomic<int64_t> pops{0}, depth_sum{0}, consumer_wait_ns{0}, producer_wait_ns{0};
};

class PrefetchNode : public Dataset {
 public:
  PrefetchNode(DatasetPtr child, int64_t depth) : child_(std::move(child)), depth_(depth) {}
  int64_t size() const override { return child_->size(); }
  std::string name() const override { return "prefetch(" + std::to_string(depth_) + ")"; }
  std::vector<DatasetPtr> children() const override { return {child_}; }
  std::string stats_note() const override {
    const double pops = static_cast<double>(std::max<int64_t>(1, c_.pops.load()));
    char buf[160];
    std::snprintf(buf, sizeof buf, "queue depth %.2f of %lld on average; consumer waited %.2f ms, producer waited %.2f ms",
                  static_cast<double>(c_.depth_sum.load()) / pops, static_cast<long long>(depth_),
                  static_cast<double>(c_.consumer_wait_ns.load()) * 1e-6,
                  static_cast<double>(c_.producer_wait_ns.load()) * 1e-6);
    return buf;
  }
  void reset_note_stats() const override {
    c_.pops = 0;
    c_.depth_sum = 0;
    c_.consumer_wait_ns = 0;
    c_.producer_wait_ns = 0;
  }
  std::unique_ptr<BlockStream> open_impl(const StreamPlan& plan) const override;

  DatasetPtr child_;
  int64_t depth_;
  mutable PrefetchCounters c_;
};

class PrefetchStream : public BlockStream {
 public:
  PrefetchStream(const PrefetchNode& node, std::unique_ptr<BlockStream> src) : node_(node), src_(std::move(src)) {
    thread_ = std::thread([this] { produce(); });
  }
  ~PrefetchStream() override {
    {
      std::lock_guard lk(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  std::optional<Block> next() override {
    std::unique_lock lk(m_);
    const int64_t t0 = now_ns();
    cv_.wait(lk, [&] { return !q_.empty() || done_ || error_; });
    node_.c_.consumer_wait_ns.fetch_add(now_ns() - t0, std::memory_order_relaxed);
    node_.c_.pops.fetch_add(1, std::memory_order_relaxed);
    node_.c_.depth_sum.fetch_add(static_cast<int64_t>(q_.size()), std::memory_order_relaxed);
    if (!q_.empty()) {
      Block b = std::move(q_.front());
      q_.pop_front();
      cv_.notify_all();
      return b;
    }
    if (error_) std::rethrow_exception(error_);
    return std::nullopt;
  }

 private:
  void produce() {
    try {
      while (true) {
        auto b = src_->next();
        std::unique_lock lk(m_);
        if (stop_) return;
        if (!b) {
          done_ = true;
          cv_.notify_all();
          return;
        }
        const int64_t t0 = now_ns();
        cv_.wait(lk, [&] { return stop_ || static_cast<int64_t>(q_.size()) < node_.depth_; });
        node_.c_.producer_wait_ns.fetch_add(now_ns() - t0, std::memory_order_relaxed);
        if (stop_) return;
        q_.push_back(std::move(*b));
        cv_.notify_all();
      }
    } catch (...) {
      std::lock_guard lk(m_);
      error_ = std::current_exception();
      cv_.notify_all();
    }
  }

  const PrefetchNode& node_;
  std::unique_ptr<BlockStream> src_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Block> q_;
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

std::unique_ptr<BlockStream> PrefetchNode::open_impl(const StreamPlan& plan) const {
  StreamPlan down;
  down.epoch = plan.epoch;
  down.block = plan.block;
  return std::make_unique<PrefetchStream>(*this, child_->open(down));
}

}  // namespace

std::shared_ptr<Dataset> make_prefetch(DatasetPtr child, int64_t depth) {
  SPORE_CHECK(depth >= 1, "[prefetch] depth must be >= 1, got ", depth);
  return std::make_shared<PrefetchNode>(std::move(child), depth);
}

}  // namespace spore::data
