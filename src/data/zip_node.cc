// SPDX-License-Identifier: Apache-2.0
// zip: rows joined column-wise. Both children get the same plan, so their blocks usually line
// up; a queue re-cuts the second child's blocks when they do not.
#include "data/block.h"
#include "data/nodes.h"
#include "data/stream.h"

namespace spore::data {
namespace {

class ZipNode : public Dataset {
 public:
  ZipNode(DatasetPtr a, DatasetPtr b) : a_(std::move(a)), b_(std::move(b)) {}
  int64_t size() const override {
    const int64_t na = a_->size(), nb = b_->size();
    return na < 0 || nb < 0 ? -1 : std::min(na, nb);
  }
  bool random_access() const override { return a_->random_access() && b_->random_access() && size() >= 0; }
  std::string name() const override { return "zip"; }
  std::vector<DatasetPtr> children() const override { return {a_, b_}; }

  Block gather_impl(std::span<const int64_t> idx, uint64_t epoch) const override {
    Block x = a_->gather(idx, epoch);
    Block y = b_->gather(idx, epoch);
    for (Tensor& c : y.columns) x.columns.push_back(std::move(c));
    return x;
  }
  std::unique_ptr<BlockStream> open_impl(const StreamPlan& plan) const override;

  DatasetPtr a_, b_;
};

class ZipStream : public BlockStream {
 public:
  ZipStream(std::unique_ptr<BlockStream> a, std::unique_ptr<BlockStream> b) : a_(std::move(a)), b_(std::move(b)) {}
  std::optional<Block> next() override {
    auto x = a_->next();
    if (!x) return std::nullopt;
    while (!b_done_ && q_.rows() < x->rows) {
      auto y = b_->next();
      if (!y)
        b_done_ = true;
      else
        q_.push(std::move(*y));
    }
    const int64_t n = std::min(x->rows, q_.rows());
    if (n == 0) return std::nullopt;
    Block out = slice_rows(*x, 0, n);
    Block y = q_.pop(n, std::nullopt, "zip");
    for (Tensor& c : y.columns) out.columns.push_back(std::move(c));
    return out;
  }

 private:
  std::unique_ptr<BlockStream> a_, b_;
  BlockQueue q_;
  bool b_done_ = false;
};

std::unique_ptr<BlockStream> ZipNode::open_impl(const StreamPlan& plan) const {
  StreamPlan pa = plan, pb = plan;
  if (!random_access()) pa.order = pb.order = nullptr;
  return std::make_unique<ZipStream>(a_->open(pa), b_->open(pb));
}

}  // namespace

std::shared_ptr<Dataset> make_zip(DatasetPtr a, DatasetPtr b) { return std::make_shared<ZipNode>(std::move(a), std::move(b)); }

}  // namespace spore::data
