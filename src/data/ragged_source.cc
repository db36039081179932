// SPDX-License-Identifier: Apache-2.0
// Rows of different shapes (image_folder's images of several sizes, its encoded files). Blocks
// stack rows along axis 0, so each block is a run of rows of one shape: downstream, map
// transforms them as usual and batch joins them once they agree (after resize or crop) or pads them.
#include <cstring>

#include "data/nodes.h"
#include "data/stream.h"

namespace spore::data {
namespace {

bool same_shapes(const Row& a, const Row& b) {
  for (size_t c = 0; c < a.size(); ++c)
    if (a[c].shape() != b[c].shape()) return false;
  return true;
}

class RaggedSource : public Dataset {
 public:
  RaggedSource(std::vector<Row> rows, std::string name, int64_t max_run)
      : rows_(std::move(rows)), name_(std::move(name)), max_run_(max_run) {}
  int64_t size() const override { return static_cast<int64_t>(rows_.size()); }
  std::string name() const override { return name_ + "[" + std::to_string(size()) + "]"; }
  std::unique_ptr<BlockStream> open_impl(const StreamPlan& plan) const override;

  /// Rows [start, stop) copied into one block (copies: a caller may write into what it reads).
  Block run(int64_t start, int64_t stop) const {
    WorkTimer t(node_stats().work_ns);
    Block b;
    b.rows = stop - start;
    for (size_t c = 0; c < rows_[start].size(); ++c) {
      const Tensor& first = rows_[start][c];
      Shape shape{b.rows};
      for (Dim d : first.shape()) shape.push_back(d);
      Tensor col = Tensor::empty(shape, first.dtype());
      const size_t bytes = static_cast<size_t>(first.numel()) * first.itemsize();
      for (int64_t r = start; r < stop; ++r)
        if (bytes) std::memcpy(static_cast<char*>(col.data_ptr()) + (r - start) * bytes, rows_[r][c].data_ptr(), bytes);
      b.columns.push_back(std::move(col));
    }
    return b;
  }

  std::vector<Row> rows_;
  std::string name_;
  int64_t max_run_;
};

class RaggedStream : public BlockStream {
 public:
  RaggedStream(const RaggedSource& node, int64_t block)
      : node_(node), block_(std::max<int64_t>(1, std::min(block, node.max_run_))) {}
  std::optional<Block> next() override {
    const int64_t n = node_.size();
    if (pos_ >= n) return std::nullopt;
    int64_t stop = pos_ + 1;
    while (stop < n && stop - pos_ < block_ && same_shapes(node_.rows_[pos_], node_.rows_[stop])) ++stop;
    Block b = node_.run(pos_, stop);
    pos_ = stop;
    return b;
  }

 private:
  const RaggedSource& node_;
  int64_t block_;
  int64_t pos_ = 0;
};

std::unique_ptr<BlockStream> RaggedSource::open_impl(const StreamPlan& plan) const {
  return std::make_unique<RaggedStream>(*this, plan.block);
}

}  // namespace

std::shared_ptr<Dataset> make_ragged_source(std::vector<Row> rows, std::string name, int64_t max_run) {
  SPORE_CHECK(!rows.empty(), "[", name, "] no rows");
  SPORE_ASSERT(max_run >= 1);
  for (size_t r = 0; r < rows.size(); ++r) {
    SPORE_CHECK(rows[r].size() == rows[0].size(), "[", name, "] row ", r, " has ", rows[r].size(), " columns, row 0 has ",
                rows[0].size());
    for (size_t c = 0; c < rows[r].size(); ++c) {
      Tensor& t = rows[r][c];
      SPORE_CHECK(t.defined() && t.device().type == DeviceType::CPU, "[", name, "] row ", r, " column ", c,
                  " is undefined or not on the CPU");
      SPORE_CHECK(t.dtype() == rows[0][c].dtype(), "[", name, "] column ", c, " is ", dtype_name(rows[0][c].dtype()),
                  " in row 0 and ", dtype_name(t.dtype()), " in row ", r);
      t = t.contiguous();
    }
  }
  return std::make_shared<RaggedSource>(std::move(rows), std::move(name), max_run);
}

}  // namespace spore::data
