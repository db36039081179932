// SPDX-License-Identifier: Apache-2.0
// Nodes that keep some rows of their child: take/skip (a range), shard (every n-th row) and
// the parts of split (a fixed list of rows).
#include "data/block.h"
#include "data/remap_node.h"

namespace spore::data {
namespace {

/// Rows [start, start + count) of a child read as a stream.
class RangeStream : public BlockStream {
 public:
  RangeStream(std::unique_ptr<BlockStream> src, int64_t start, int64_t count)
      : src_(std::move(src)), start_(start), count_(count) {}
  std::optional<Block> next() override {
    while (count_ < 0 || emitted_ < count_) {
      auto b = src_->next();
      if (!b) return std::nullopt;
      const int64_t lo = std::clamp<int64_t>(start_ - seen_, 0, b->rows);
      int64_t hi = b->rows;
      if (count_ >= 0) hi = std::min(hi, lo + (count_ - emitted_));
      seen_ += b->rows;
      if (hi > lo) {
        emitted_ += hi - lo;
        return slice_rows(*b, lo, hi);
      }
    }
    return std::nullopt;
  }

 private:
  std::unique_ptr<BlockStream> src_;
  int64_t start_, count_;
  int64_t seen_ = 0, emitted_ = 0;
};

class RangeNode : public RemapNode {
 public:
  RangeNode(DatasetPtr child, int64_t start, int64_t count) : RemapNode(std::move(child)), start_(start), count_(count) {}
  int64_t size() const override {
    const int64_t n = child_->size();
    if (n < 0) return -1;
    const int64_t avail = std::max<int64_t>(0, n - start_);
    return count_ < 0 ? avail : std::min(count_, avail);
  }
  std::string name() const override {
    return count_ < 0 ? "skip(" + std::to_string(start_) + ")" : "take(" + std::to_string(count_) + ")";
  }

 protected:
  std::function<int64_t(int64_t)> index_map(uint64_t) const override {
    return [s = start_](int64_t i) { return i + s; };
  }
  std::unique_ptr<BlockStream> open_stream(const StreamPlan& plan) const override {
    return std::make_unique<RangeStream>(child_->open(plan), start_, count_);
  }

 private:
  int64_t start_, count_;
};

/// Rows whose position modulo num_shards is shard_id, of a child read as a stream.
class ShardStream : public BlockStream {
 public:
  ShardStream(std::unique_ptr<BlockStream> src, int64_t num, int64_t id) : src_(std::move(src)), num_(num), id_(id) {}
  std::optional<Block> next() override {
    while (auto b = src_->next()) {
      idx_.clear();
      for (int64_t i = 0; i < b->rows; ++i)
        if ((seen_ + i) % num_ == id_) idx_.push_back(i);
      seen_ += b->rows;
      if (!idx_.empty()) return take_rows(*b, idx_);
    }
    return std::nullopt;
  }

 private:
  std::unique_ptr<BlockStream> src_;
  int64_t num_, id_;
  int64_t seen_ = 0;
  std::vector<int64_t> idx_;
};

class ShardNode : public RemapNode {
 public:
  ShardNode(DatasetPtr child, int64_t num, int64_t id) : RemapNode(std::move(child)), num_(num), id_(id) {}
  int64_t size() const override {
    const int64_t n = child_->size();
    if (n < 0) return -1;
    return n <= id_ ? 0 : (n - id_ + num_ - 1) / num_;
  }
  std::string name() const override { return "shard(" + std::to_string(id_) + " of " + std::to_string(num_) + ")"; }

 protected:
  std::function<int64_t(int64_t)> index_map(uint64_t) const override {
    return [n = num_, s = id_](int64_t i) { return i * n + s; };
  }
  std::unique_ptr<BlockStream> open_stream(const StreamPlan& plan) const override {
    return std::make_unique<ShardStream>(child_->open(plan), num_, id_);
  }

 private:
  int64_t num_, id_;
};

class SubsetNode : public RemapNode {
 public:
  SubsetNode(DatasetPtr child, std::shared_ptr<const std::vector<int64_t>> idx, std::string name)
      : RemapNode(std::move(child)), idx_(std::move(idx)), name_(std::move(name)) {}
  int64_t size() const override { return static_cast<int64_t>(idx_->size()); }
  std::string name() const override { return name_; }

 protected:
  std::function<int64_t(int64_t)> index_map(uint64_t) const override {
    return [idx = idx_](int64_t i) { return (*idx)[i]; };
  }
  std::unique_ptr<BlockStream> open_stream(const StreamPlan&) const override {
    SPORE_ASSERT(false, "split of a streamed dataset");
    return nullptr;
  }

 private:
  std::shared_ptr<const std::vector<int64_t>> idx_;
  std::string name_;
};

}  // namespace

std::shared_ptr<Dataset> make_range(DatasetPtr child, int64_t start, int64_t count) {
  return std::make_shared<RangeNode>(std::move(child), start, count);
}

std::shared_ptr<Dataset> make_shard(DatasetPtr child, int64_t num_shards, int64_t shard_id) {
  SPORE_CHECK(num_shards >= 1, "[shard] num_shards must be >= 1, got ", num_shards);
  SPORE_CHECK(shard_id >= 0 && shard_id < num_shards, "[shard] shard_id must be in [0, ", num_shards, "), got ", shard_id);
  return std::make_shared<ShardNode>(std::move(child), num_shards, shard_id);
}

std::shared_ptr<Dataset> make_subset(DatasetPtr child, std::shared_ptr<const std::vector<int64_t>> indices,
                                     std::string name) {
  return std::make_shared<SubsetNode>(std::move(child), std::move(indices), std::move(name));
}

}  // namespace spore::data
