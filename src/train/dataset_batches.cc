// SPDX-License-Identifier: Apache-2.0
#include "spore/train/dataset_batches.h"

#include "spore/error.h"

namespace spore::train {

DatasetBatches::DatasetBatches(std::shared_ptr<const data::Dataset> batched) : ds_(std::move(batched)) {
  SPORE_CHECK(ds_ != nullptr, "[DatasetBatches] needs a dataset");
}

void DatasetBatches::start_epoch(int64_t epoch, int64_t skip) {
  it_.reset();
  it_.emplace(ds_->iterate(static_cast<uint64_t>(epoch)));
  // Skipped batches are read and dropped: every one still advances the pipeline's state
  // exactly as in the run being resumed.
  for (int64_t i = 0; i < skip && it_->next(); ++i) {
  }
}

std::optional<Batch> DatasetBatches::next() {
  SPORE_CHECK(it_.has_value(), "[DatasetBatches] next() before start_epoch()");
  auto row = it_->next();
  if (!row) return std::nullopt;
  SPORE_CHECK(row->size() >= 2, "[DatasetBatches] a batch row has ", row->size(),
              " column(s); fit needs (inputs, labels): zip or build the pipeline with two columns");
  return Batch{(*row)[0], (*row)[1]};
}

int64_t DatasetBatches::batches_per_epoch() const { return ds_->size(); }

}  // namespace spore::train
