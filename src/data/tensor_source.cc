// SPDX-License-Identifier: Apache-2.0
// In-memory columns: from_tensors, and what the file sources decode into.
#include "data/block.h"
#include "data/nodes.h"
#include "data/stream.h"
#include "spore/data/sources.h"

namespace spore::data {
namespace {

class TensorSource : public Dataset {
 public:
  TensorSource(std::vector<Tensor> columns, std::string name) : columns_(std::move(columns)), name_(std::move(name)) {}
  int64_t size() const override { return columns_[0].size(0); }
  bool random_access() const override { return true; }
  std::string name() const override { return name_ + "[" + std::to_string(size()) + "]"; }
  Block gather_impl(std::span<const int64_t> idx, uint64_t) const override {
    WorkTimer t(node_stats().work_ns);
    Block b;
    b.rows = static_cast<int64_t>(idx.size());
    for (const Tensor& c : columns_) b.columns.push_back(gather_rows(c, idx));
    return b;
  }

 private:
  std::vector<Tensor> columns_;
  std::string name_;
};

}  // namespace

std::shared_ptr<Dataset> make_tensor_source(std::vector<Tensor> columns, std::string name) {
  SPORE_CHECK(!columns.empty(), "[", name, "] no columns given");
  for (size_t i = 0; i < columns.size(); ++i) {
    Tensor& c = columns[i];
    SPORE_CHECK(c.defined(), "[", name, "] column ", i, " is an undefined tensor");
    SPORE_CHECK(c.dim() >= 1, "[", name, "] column ", i, " is 0-d; its first dimension must be the sample axis");
    SPORE_CHECK(c.device().type == DeviceType::CPU, "[", name, "] column ", i, " is not on the CPU");
    SPORE_CHECK(c.size(0) == columns[0].size(0), "[", name, "] columns have different sample counts: column 0 has ",
                columns[0].size(0), " rows, column ", i, " has ", c.size(0));
    c = c.contiguous();
  }
  return std::make_shared<TensorSource>(std::move(columns), std::move(name));
}

std::shared_ptr<Dataset> from_tensors(std::vector<Tensor> columns) {
  return make_tensor_source(std::move(columns), "from_tensors");
}

}  // namespace spore::data
