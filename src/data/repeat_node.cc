// SPDX-License-Identifier: Apache-2.0
// repeat: the child's epochs back to back. Pass k of epoch e reads the child's epoch
// e * count + k (endless: e * 2^32 + k), so every pass shuffles and augments anew, reproducibly.
#include "data/nodes.h"
#include "data/stream.h"

namespace spore::data {
namespace {

class RepeatNode : public Dataset {
 public:
  RepeatNode(DatasetPtr child, int64_t count) : child_(std::move(child)), count_(count) {}
  int64_t size() const override {
    const int64_t n = child_->size();
    if (count_ < 0) return n == 0 ? 0 : -1;
    return n < 0 ? -1 : n * count_;
  }
  std::string name() const override { return "repeat(" + std::to_string(count_) + ")"; }
  std::vector<DatasetPtr> children() const override { return {child_}; }
  std::unique_ptr<BlockStream> open_impl(const StreamPlan& plan) const override;

  DatasetPtr child_;
  int64_t count_;
};

class RepeatStream : public BlockStream {
 public:
  RepeatStream(const RepeatNode& node, StreamPlan plan) : node_(node), plan_(std::move(plan)) {}
  std::optional<Block> next() override {
    while (node_.count_ < 0 || pass_ < node_.count_) {
      if (!src_) {
        StreamPlan down;
        down.block = plan_.block;
        down.epoch = node_.count_ < 0 ? (plan_.epoch << 32) + static_cast<uint64_t>(pass_)
                                      : plan_.epoch * static_cast<uint64_t>(node_.count_) + static_cast<uint64_t>(pass_);
        src_ = node_.child_->open(down);
        rows_this_pass_ = 0;
      }
      auto b = src_->next();
      if (b) {
        rows_this_pass_ += b->rows;
        return b;
      }
      src_.reset();
      ++pass_;
      // An empty child would make an endless repeat spin forever: end instead.
      if (rows_this_pass_ == 0) return std::nullopt;
    }
    return std::nullopt;
  }

 private:
  const RepeatNode& node_;
  StreamPlan plan_;
  std::unique_ptr<BlockStream> src_;
  int64_t pass_ = 0;
  int64_t rows_this_pass_ = 0;
};

std::unique_ptr<BlockStream> RepeatNode::open_impl(const StreamPlan& plan) const {
  return std::make_unique<RepeatStream>(*this, plan);
}

}  // namespace

std::shared_ptr<Dataset> make_repeat(DatasetPtr child, int64_t count) {
  SPORE_CHECK(count >= -1, "[repeat] count must be >= 0, or -1 for forever; got ", count);
  return std::make_shared<RepeatNode>(std::move(child), count);
}

}  // namespace spore::data
