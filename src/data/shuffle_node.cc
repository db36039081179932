// SPDX-License-Identifier: Apache-2.0
// shuffle(buffer_size, seed): MindSpore's buffer shuffle. Keep a buffer of rows; each output
// takes a uniformly drawn buffer slot and refills it with the next input row. With a buffer
// covering the data this is a uniform permutation. Over a random-access child the algorithm
// runs on row indices only and the resulting order is pushed down.
#include <map>
#include <mutex>

#include "data/block.h"
#include "data/remap_node.h"
#include "spore/data/random.h"

namespace spore::data {

std::vector<int64_t> shuffled_order(int64_t n, int64_t buffer, uint64_t key) {
  KeyedRandom rng(key);
  std::vector<int64_t> out;
  out.reserve(n);
  std::vector<int64_t> buf;
  const int64_t fill = std::min(n, std::max<int64_t>(1, buffer));
  for (int64_t i = 0; i < fill; ++i) buf.push_back(i);
  int64_t next_in = fill;
  while (!buf.empty()) {
    const int64_t j = rng.below(static_cast<int64_t>(buf.size()));
    out.push_back(buf[j]);
    if (next_in < n) {
      buf[j] = next_in++;
    } else {
      buf[j] = buf.back();
      buf.pop_back();
    }
  }
  return out;
}

namespace {

constexpr uint64_t kShuffleSalt = 0x5a17'5eedull;

/// The buffer algorithm on rows of a streamed child; emits blocks of one row.
class BufferShuffleStream : public BlockStream {
 public:
  BufferShuffleStream(std::unique_ptr<BlockStream> src, int64_t buffer, uint64_t key)
      : src_(std::move(src)), buffer_(std::max<int64_t>(1, buffer)), rng_(key) {}
  std::optional<Block> next() override {
    while (!src_done_ && static_cast<int64_t>(buf_.size()) < buffer_) {
      if (!pull()) break;
    }
    if (buf_.empty()) return std::nullopt;
    const int64_t j = rng_.below(static_cast<int64_t>(buf_.size()));
    Row out = std::move(buf_[j]);
    if (!src_done_ && pending_.rows() == 0) pull_block();
    if (pending_.rows() > 0) {
      buf_[j] = row_of_block(pending_.pop(1, std::nullopt, "shuffle"), 0);
    } else {
      buf_[j] = std::move(buf_.back());
      buf_.pop_back();
    }
    return block_of_row(out);
  }

 private:
  bool pull() {
    if (pending_.rows() == 0 && !pull_block()) return false;
    buf_.push_back(row_of_block(pending_.pop(1, std::nullopt, "shuffle"), 0));
    return true;
  }
  bool pull_block() {
    while (!src_done_) {
      auto b = src_->next();
      if (!b) {
        src_done_ = true;
        return false;
      }
      if (b->rows > 0) {
        pending_.push(std::move(*b));
        return true;
      }
    }
    return false;
  }

  std::unique_ptr<BlockStream> src_;
  int64_t buffer_;
  KeyedRandom rng_;
  BlockQueue pending_;
  std::vector<Row> buf_;
  bool src_done_ = false;
};

class ShuffleNode : public RemapNode {
 public:
  ShuffleNode(DatasetPtr child, int64_t buffer, uint64_t seed) : RemapNode(std::move(child)), buffer_(buffer), seed_(seed) {}
  int64_t size() const override { return child_->size(); }
  std::string name() const override {
    return "shuffle(" + std::to_string(buffer_) + ", seed " + std::to_string(seed_) + ")";
  }

 protected:
  std::function<int64_t(int64_t)> index_map(uint64_t epoch) const override {
    auto perm = order_for(epoch);
    return [perm](int64_t i) { return (*perm)[i]; };
  }
  std::unique_ptr<BlockStream> open_stream(const StreamPlan& plan) const override {
    return std::make_unique<BufferShuffleStream>(child_->open(plan), buffer_, sample_key(seed_, plan.epoch, kShuffleSalt));
  }

 private:
  /// The permutation of an epoch, cached: gathers ask for it once per block.
  std::shared_ptr<const std::vector<int64_t>> order_for(uint64_t epoch) const {
    std::lock_guard lk(m_);
    auto it = cache_.find(epoch);
    if (it != cache_.end()) return it->second;
    WorkTimer t(node_stats().work_ns);
    auto perm = std::make_shared<const std::vector<int64_t>>(
        shuffled_order(child_->size(), buffer_, sample_key(seed_, epoch, kShuffleSalt)));
    if (cache_.size() >= 2) cache_.erase(cache_.begin());
    cache_.emplace(epoch, perm);
    return perm;
  }

  int64_t buffer_;
  uint64_t seed_;
  mutable std::mutex m_;
  mutable std::map<uint64_t, std::shared_ptr<const std::vector<int64_t>>> cache_;
};

}  // namespace

std::shared_ptr<Dataset> make_shuffle(DatasetPtr child, int64_t buffer_size, uint64_t seed) {
  SPORE_CHECK(buffer_size >= 1, "[shuffle] buffer_size must be >= 1, got ", buffer_size,
              "; pass the dataset size (or more) for a full shuffle");
  return std::make_shared<ShuffleNode>(std::move(child), buffer_size, seed);
}

}  // namespace spore::data
