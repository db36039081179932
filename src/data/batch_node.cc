// SPDX-License-Identifier: Apache-2.0
// batch: joins `size` rows into one row of batch tensors. It asks its child for blocks of
// exactly `size` rows, so on the fast path a batch is the block the child made (no copy).
#include "data/block.h"
#include "data/nodes.h"
#include "data/stream.h"

namespace spore::data {
namespace {

class BatchNode : public Dataset {
 public:
  BatchNode(DatasetPtr child, int64_t size, bool drop, std::optional<BatchPad> pad)
      : child_(std::move(child)), size_(size), drop_(drop), pad_(std::move(pad)) {}
  int64_t size() const override {
    const int64_t n = child_->size();
    if (n < 0) return -1;
    return drop_ ? n / size_ : (n + size_ - 1) / size_;
  }
  std::string name() const override {
    return "batch(" + std::to_string(size_) + (drop_ ? ", drop_remainder" : "") + (pad_ ? ", pad" : "") + ")";
  }
  std::vector<DatasetPtr> children() const override { return {child_}; }
  std::unique_ptr<BlockStream> open_impl(const StreamPlan& plan) const override;

  DatasetPtr child_;
  int64_t size_;
  bool drop_;
  std::optional<BatchPad> pad_;
};

class BatchStream : public BlockStream {
 public:
  BatchStream(const BatchNode& node, std::unique_ptr<BlockStream> src) : node_(node), src_(std::move(src)) {}
  std::optional<Block> next() override {
    while (!done_ && q_.rows() < node_.size_) {
      auto b = src_->next();
      if (!b)
        done_ = true;
      else
        q_.push(std::move(*b));
    }
    const int64_t n = std::min(q_.rows(), node_.size_);
    if (n == 0 || (n < node_.size_ && node_.drop_)) return std::nullopt;
    WorkTimer t(node_.node_stats().work_ns);
    Block b = q_.pop(n, node_.pad_, "batch");
    // The batch is one row: its columns gain a leading axis of 1.
    Block out;
    out.rows = 1;
    for (Tensor& c : b.columns) out.columns.push_back(c.unsqueeze(0));
    return out;
  }

 private:
  const BatchNode& node_;
  std::unique_ptr<BlockStream> src_;
  BlockQueue q_;
  bool done_ = false;
};

std::unique_ptr<BlockStream> BatchNode::open_impl(const StreamPlan& plan) const {
  StreamPlan down;
  down.epoch = plan.epoch;
  down.block = size_;
  return std::make_unique<BatchStream>(*this, child_->open(down));
}

}  // namespace

std::shared_ptr<Dataset> make_batch(DatasetPtr child, int64_t size, bool drop_remainder, std::optional<BatchPad> pad) {
  SPORE_CHECK(size >= 1, "[batch] size must be >= 1, got ", size);
  return std::make_shared<BatchNode>(std::move(child), size, drop_remainder, std::move(pad));
}

}  // namespace spore::data
