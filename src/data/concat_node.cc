// SPDX-License-Identifier: Apache-2.0
// concat: the first child's rows, then the second's.
#include "data/block.h"
#include "data/nodes.h"
#include "data/stream.h"

namespace spore::data {
namespace {

class ConcatNode : public Dataset {
 public:
  ConcatNode(DatasetPtr a, DatasetPtr b) : a_(std::move(a)), b_(std::move(b)) {}
  int64_t size() const override {
    const int64_t na = a_->size(), nb = b_->size();
    return na < 0 || nb < 0 ? -1 : na + nb;
  }
  bool random_access() const override { return a_->random_access() && b_->random_access() && size() >= 0; }
  std::string name() const override { return "concat"; }
  std::vector<DatasetPtr> children() const override { return {a_, b_}; }

  Block gather_impl(std::span<const int64_t> idx, uint64_t epoch) const override {
    const int64_t na = a_->size();
    std::vector<int64_t> ia, ib;
    for (int64_t i : idx) (i < na ? ia : ib).push_back(i < na ? i : i - na);
    if (ib.empty()) return a_->gather(ia, epoch);
    if (ia.empty()) return b_->gather(ib, epoch);
    // Interleaved (a shuffle above): read each side once, then place rows in order.
    const Block x = a_->gather(ia, epoch);
    const Block y = b_->gather(ib, epoch);
    check_same_rows(x, y, "concat");
    Block out = empty_like_rows(x, static_cast<int64_t>(idx.size()));
    int64_t pa = 0, pb = 0;
    for (size_t r = 0; r < idx.size(); ++r) {
      if (idx[r] < na)
        copy_row(x, pa++, out, static_cast<int64_t>(r));
      else
        copy_row(y, pb++, out, static_cast<int64_t>(r));
    }
    return out;
  }
  std::unique_ptr<BlockStream> open_impl(const StreamPlan& plan) const override;

  DatasetPtr a_, b_;
};

class ConcatStream : public BlockStream {
 public:
  ConcatStream(const ConcatNode& node, StreamPlan plan) : node_(node), plan_(std::move(plan)), src_(node.a_->open(plan_)) {}
  std::optional<Block> next() override {
    while (src_) {
      auto b = src_->next();
      if (b) {
        SPORE_CHECK(b->columns.size() == ncols_ || ncols_ == 0, "[concat] the datasets' rows have ", ncols_, " and ",
                    b->columns.size(), " columns; concat needs the same columns");
        ncols_ = b->columns.size();
        return b;
      }
      src_ = second_ ? nullptr : node_.b_->open(plan_);
      second_ = true;
    }
    return std::nullopt;
  }

 private:
  const ConcatNode& node_;
  StreamPlan plan_;
  std::unique_ptr<BlockStream> src_;
  bool second_ = false;
  size_t ncols_ = 0;
};

std::unique_ptr<BlockStream> ConcatNode::open_impl(const StreamPlan& plan) const {
  if (plan.order) return Dataset::open_impl(plan);
  return std::make_unique<ConcatStream>(*this, plan);
}

}  // namespace

std::shared_ptr<Dataset> make_concat(DatasetPtr a, DatasetPtr b) {
  return std::make_shared<ConcatNode>(std::move(a), std::move(b));
}

}  // namespace spore::data
