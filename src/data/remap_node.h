// SPDX-License-Identifier: Apache-2.0
#pragma once
// Nodes whose row i is row f(i) of their child (shuffle, take/skip, shard, split). Over a
// random-access child they are random-access too, and they push their order down instead of
// reading rows themselves.
#include "data/nodes.h"
#include "data/stream.h"

namespace spore::data {

class RemapNode : public Dataset {
 public:
  explicit RemapNode(DatasetPtr child) : child_(std::move(child)) {}
  bool random_access() const override { return child_->random_access() && child_->size() >= 0; }
  std::vector<DatasetPtr> children() const override { return {child_}; }

  Block gather_impl(std::span<const int64_t> idx, uint64_t epoch) const override {
    std::vector<int64_t> mapped(idx.size());
    const auto f = index_map(epoch);
    for (size_t i = 0; i < idx.size(); ++i) mapped[i] = f(idx[i]);
    return child_->gather(mapped, epoch);
  }
  std::unique_ptr<BlockStream> open_impl(const StreamPlan& plan) const override {
    if (!random_access()) return open_stream(plan);
    StreamPlan down = plan;
    down.order = remap_order(plan, size(), index_map(plan.epoch));
    return child_->open(down);
  }

 protected:
  /// Row i of this node is row f(i) of the child, in `epoch`.
  virtual std::function<int64_t(int64_t)> index_map(uint64_t epoch) const = 0;
  /// The same over a streamed child.
  virtual std::unique_ptr<BlockStream> open_stream(const StreamPlan& plan) const = 0;

  DatasetPtr child_;
};

}  // namespace spore::data
