// SPDX-License-Identifier: Apache-2.0
// generator: rows from a C++ function, read in order from one thread.
#include "data/block.h"
#include "data/nodes.h"
#include "data/stream.h"
#include "spore/data/sources.h"

namespace spore::data {
namespace {

class GeneratorSource : public Dataset {
 public:
  GeneratorSource(std::function<std::optional<Row>(int64_t)> fn, int64_t size) : fn_(std::move(fn)), size_(size) {}
  int64_t size() const override { return size_; }
  std::string name() const override { return "generator"; }
  std::unique_ptr<BlockStream> open_impl(const StreamPlan& plan) const override;

  std::function<std::optional<Row>(int64_t)> fn_;
  int64_t size_;
};

class GeneratorStream : public BlockStream {
 public:
  explicit GeneratorStream(const GeneratorSource& node) : node_(node) {}
  std::optional<Block> next() override {
    if (done_ || (node_.size_ >= 0 && i_ >= node_.size_)) return std::nullopt;
    std::optional<Row> row;
    {
      WorkTimer t(node_.node_stats().work_ns);
      row = node_.fn_(i_);
    }
    if (!row) {
      SPORE_CHECK(node_.size_ < 0, "[generator] returned no row at index ", i_, " but its size was given as ", node_.size_);
      done_ = true;
      return std::nullopt;
    }
    SPORE_CHECK(!row->empty(), "[generator] row ", i_, " has no columns");
    for (size_t c = 0; c < row->size(); ++c)
      SPORE_CHECK((*row)[c].defined(), "[generator] row ", i_, " column ", c, " is an undefined tensor");
    if (i_ == 0) ncols_ = row->size();
    SPORE_CHECK(row->size() == ncols_, "[generator] row ", i_, " has ", row->size(), " columns, row 0 had ", ncols_);
    ++i_;
    return block_of_row(*row);
  }

 private:
  const GeneratorSource& node_;
  int64_t i_ = 0;
  size_t ncols_ = 0;
  bool done_ = false;
};

std::unique_ptr<BlockStream> GeneratorSource::open_impl(const StreamPlan&) const {
  return std::make_unique<GeneratorStream>(*this);
}

}  // namespace

std::shared_ptr<Dataset> generator(std::function<std::optional<Row>(int64_t)> fn, int64_t size) {
  SPORE_CHECK(fn != nullptr, "[generator] the function is empty");
  return std::make_shared<GeneratorSource>(std::move(fn), size);
}

}  // namespace spore::data
