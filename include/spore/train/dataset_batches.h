// SPDX-License-Identifier: Apache-2.0
#pragma once
// A data pipeline (spore::data) as what Model::fit reads: each row of a batched dataset is one
// batch, column 0 the inputs and column 1 the labels. Epoch e iterates the pipeline with
// epoch e, so shuffling and augmentation depend on (seed, epoch, sample) alone and a resumed
// run sees the batches the uninterrupted run saw.
#include <memory>
#include <optional>

#include "spore/data/dataset.h"
#include "spore/train/batch_source.h"

namespace spore::train {

class DatasetBatches : public BatchSource {
 public:
  explicit DatasetBatches(std::shared_ptr<const data::Dataset> batched);
  void start_epoch(int64_t epoch, int64_t skip = 0) override;
  std::optional<Batch> next() override;
  int64_t batches_per_epoch() const override;
  const data::Dataset& dataset() const { return *ds_; }

 private:
  std::shared_ptr<const data::Dataset> ds_;
  std::optional<data::Iterator> it_;
};

}  // namespace spore::train
