// SPDX-License-Identifier: Apache-2.0
#pragma once
// The data sets the command line knows: Fashion-MNIST from Debian's dataset-fashion-mnist
// package (the default), or any directory of MNIST-format IDX files.
#include <cstdint>
#include <memory>
#include <string>

#include <spore/data/dataset.h>

namespace spore::cli {

struct DataOptions {
  std::string dataset = "fashion-mnist";
  int64_t batch_size = 64;
  uint64_t seed = 0;
  int64_t limit = -1;  // use only the first `limit` samples (quick runs and tests)
  int workers = 1;
};

/// The directory holding the IDX files for `dataset`; errors name the package or files to provide.
std::string dataset_dir(const std::string& dataset);
/// Training batches: shuffled per epoch from the seed, normalized, (N, 1, 28, 28) float32 + int64 labels.
std::shared_ptr<const data::Dataset> train_batches(const DataOptions& o);
/// Test batches in file order.
std::shared_ptr<const data::Dataset> test_batches(const DataOptions& o);

}  // namespace spore::cli
