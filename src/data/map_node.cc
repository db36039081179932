// SPDX-License-Identifier: Apache-2.0
// map: transforms on one column, block by block. With several workers, each worker claims the
// next block number, reads and transforms it, and the consumer takes results in block order, so
// the output is the same whatever the worker count or timing.
#include <condition_variable>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

#include "data/nodes.h"
#include "data/stream.h"
#include "spore/data/transforms.h"

namespace spore::data {
namespace {

class MapNode : public Dataset {
 public:
  MapNode(DatasetPtr child, std::vector<Transform> ops, int column, int workers)
      : child_(std::move(child)), ops_(std::move(ops)), column_(column), workers_(workers),
        op_ns_(std::make_unique<std::atomic<int64_t>[]>(ops_.size())) {
    for (size_t i = 0; i < ops_.size(); ++i) op_ns_[i] = 0;
  }

  int64_t size() const override { return child_->size(); }
  bool random_access() const override { return child_->random_access(); }
  std::vector<DatasetPtr> children() const override { return {child_}; }
  std::string name() const override {
    std::string s = "map[";
    for (size_t i = 0; i < ops_.size(); ++i) s += (i ? ", " : "") + ops_[i]->name();
    s += "]";
    if (workers_ > 1) s += " x" + std::to_string(workers_);
    return s;
  }
  std::string stats_note() const override {
    std::string s;
    for (size_t i = 0; i < ops_.size(); ++i) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s%s %.2f ms", i ? ", " : "", ops_[i]->name().c_str(),
                    static_cast<double>(op_ns_[i].load()) * 1e-6);
      s += buf;
    }
    return s;
  }
  void reset_note_stats() const override {
    for (size_t i = 0; i < ops_.size(); ++i) op_ns_[i] = 0;
  }

  /// Runs the transforms on a block whose rows have sample indices `ids`.
  Block apply(Block b, std::span<const int64_t> ids, uint64_t epoch) const {
    const int ncols = static_cast<int>(b.columns.size());
    const int col = column_ < 0 ? column_ + ncols : column_;
    SPORE_CHECK(col >= 0 && col < ncols, "[map] column ", column_, " does not exist: rows have ", ncols, " columns");
    SampleInfo info{epoch, ids};
    Tensor x = b.columns[col];
    for (size_t i = 0; i < ops_.size(); ++i) {
      const int64_t t0 = now_ns();
      x = ops_[i]->apply(x, info);
      const int64_t dt = now_ns() - t0;
      op_ns_[i].fetch_add(dt, std::memory_order_relaxed);
      node_stats().work_ns.fetch_add(dt, std::memory_order_relaxed);
      SPORE_CHECK(x.dim() >= 1 && x.size(0) == b.rows, "[map] transform ", ops_[i]->name(), " returned ",
                  x.dim() >= 1 ? x.size(0) : 0, " rows for a block of ", b.rows);
    }
    b.columns[col] = std::move(x);
    return b;
  }

  Block gather_impl(std::span<const int64_t> idx, uint64_t epoch) const override {
    return apply(child_->gather(idx, epoch), idx, epoch);
  }

  std::unique_ptr<BlockStream> open_impl(const StreamPlan& plan) const override;

 private:
  DatasetPtr child_;
  std::vector<Transform> ops_;
  int column_;
  int workers_;
  std::unique_ptr<std::atomic<int64_t>[]> op_ns_;
};

/// One worker: transforms the child's stream as it comes; ids are positions in that stream.
class SerialMapStream : public BlockStream {
 public:
  SerialMapStream(const MapNode& node, std::unique_ptr<BlockStream> src, uint64_t epoch)
      : node_(node), src_(std::move(src)), epoch_(epoch) {}
  std::optional<Block> next() override {
    auto b = src_->next();
    if (!b) return std::nullopt;
    ids_.resize(b->rows);
    std::iota(ids_.begin(), ids_.end(), pos_);
    pos_ += b->rows;
    return node_.apply(std::move(*b), ids_, epoch_);
  }

 private:
  const MapNode& node_;
  std::unique_ptr<BlockStream> src_;
  uint64_t epoch_;
  int64_t pos_ = 0;
  std::vector<int64_t> ids_;
};

/// Several workers. A random-access child is read by the workers themselves (block k of the
/// plan); a streamed child is pulled one block at a time under a lock, numbered as pulled.
class ParallelMapStream : public BlockStream {
 public:
  ParallelMapStream(const MapNode& node, const DatasetPtr& child, StreamPlan plan, int workers)
      : node_(node), child_(*child), plan_(std::move(plan)), max_inflight_(2 * workers) {
    if (child_.random_access()) {
      rows_ = plan_rows(child_, plan_);
      plan_.block = std::max<int64_t>(1, plan_.block);
      end_ = (rows_ + plan_.block - 1) / plan_.block;
    } else {
      src_ = child_.open(plan_);
    }
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  }
  ~ParallelMapStream() override {
    {
      std::lock_guard lk(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

  std::optional<Block> next() override {
    std::unique_lock lk(m_);
    cv_.wait(lk, [&] { return error_ || done_.count(emit_) || (end_ >= 0 && emit_ >= end_); });
    if (error_) std::rethrow_exception(error_);
    if (end_ >= 0 && emit_ >= end_) return std::nullopt;
    auto it = done_.find(emit_);
    Block b = std::move(it->second);
    done_.erase(it);
    ++emit_;
    cv_.notify_all();
    return b;
  }

 private:
  void work() {
    std::vector<int64_t> idx;
    try {
      while (true) {
        int64_t seq;
        {
          std::unique_lock lk(m_);
          cv_.wait(lk, [&] { return stop_ || error_ || finished() || issued_ - emit_ < max_inflight_; });
          if (stop_ || error_ || finished()) return;
          seq = issued_++;
        }
        Block out;
        if (src_ == nullptr) {
          const int64_t start = seq * plan_.block;
          plan_indices(plan_, start, std::min(rows_, start + plan_.block), idx);
          out = node_.apply(child_.gather(idx, plan_.epoch), idx, plan_.epoch);
        } else {
          std::optional<Block> in;
          {
            // Blocks are numbered in pull order; tickets are claimed in the same order only
            // up to scheduling, so number them here.
            std::lock_guard pl(pull_m_);
            if (!src_done_) in = src_->next();
            if (!in) {
              src_done_ = true;
              std::lock_guard lk(m_);
              end_ = pulled_;
              cv_.notify_all();
              return;
            }
            seq = pulled_++;
            idx.resize(in->rows);
            std::iota(idx.begin(), idx.end(), rows_pulled_);
            rows_pulled_ += in->rows;
          }
          out = node_.apply(std::move(*in), idx, plan_.epoch);
        }
        std::lock_guard lk(m_);
        done_.emplace(seq, std::move(out));
        cv_.notify_all();
      }
    } catch (...) {
      std::lock_guard lk(m_);
      if (!error_) error_ = std::current_exception();
      cv_.notify_all();
    }
  }
  bool finished() const { return end_ >= 0 && issued_ >= end_; }

  const MapNode& node_;
  const Dataset& child_;
  StreamPlan plan_;
  int64_t max_inflight_;
  int64_t rows_ = 0;
  std::unique_ptr<BlockStream> src_;

  std::mutex m_;
  std::condition_variable cv_;
  int64_t issued_ = 0;  // tickets handed to workers
  int64_t emit_ = 0;    // next block the consumer takes
  int64_t end_ = -1;    // number of blocks, once known
  std::map<int64_t, Block> done_;
  std::exception_ptr error_;
  bool stop_ = false;

  std::mutex pull_m_;  // streamed child only
  bool src_done_ = false;
  int64_t pulled_ = 0;
  int64_t rows_pulled_ = 0;

  std::vector<std::thread> threads_;
};

std::unique_ptr<BlockStream> MapNode::open_impl(const StreamPlan& plan) const {
  if (workers_ > 1) return std::make_unique<ParallelMapStream>(*this, child_, plan, workers_);
  if (random_access()) return Dataset::open_impl(plan);
  return std::make_unique<SerialMapStream>(*this, child_->open(plan), plan.epoch);
}

}  // namespace

std::shared_ptr<Dataset> make_map(DatasetPtr child, std::vector<Transform> ops, int column, int workers) {
  SPORE_CHECK(workers >= 1 && workers <= 256, "[map] num_parallel_workers must be in [1, 256], got ", workers);
  for (const auto& op : ops) SPORE_CHECK(op != nullptr, "[map] a transform in the list is null");
  return std::make_shared<MapNode>(std::move(child), std::move(ops), column, workers);
}

}  // namespace spore::data
