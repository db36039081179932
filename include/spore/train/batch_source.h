// SPDX-License-Identifier: Apache-2.0
#pragma once
// What Model::fit and Model::evaluate read: batches of (inputs, labels), one epoch at a time.
// A source positions itself at (epoch, batch index) so a resumed run reads exactly the batches
// the uninterrupted run would have read: the order must be a function of the source's seed and
// the epoch alone (never of timing or worker count).
#include <cstdint>
#include <optional>

#include "spore/tensor.h"

namespace spore::train {

struct Batch {
  Tensor x;  // inputs, first dimension = batch
  Tensor y;  // labels (or targets)
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  /// Starts epoch `epoch` (0-based), positioned after its first `skip` batches.
  virtual void start_epoch(int64_t epoch, int64_t skip = 0) = 0;
  /// The next batch of the epoch, or nothing at its end.
  virtual std::optional<Batch> next() = 0;
  /// Batches and samples per epoch, or -1 when unknown.
  virtual int64_t batches_per_epoch() const { return -1; }
  virtual int64_t samples_per_epoch() const { return -1; }
};

/// In-memory tensors (first dimension = samples) cut into batches; with `shuffle`, each epoch's
/// order is a permutation drawn from (seed, epoch). The last partial batch is kept unless
/// `drop_remainder`.
class TensorBatches : public BatchSource {
 public:
  TensorBatches(Tensor x, Tensor y, int64_t batch_size, bool shuffle = false, uint64_t seed = 0,
                bool drop_remainder = false);
  void start_epoch(int64_t epoch, int64_t skip = 0) override;
  std::optional<Batch> next() override;
  int64_t batches_per_epoch() const override;
  int64_t samples_per_epoch() const override;

 private:
  Tensor x_, y_;
  int64_t batch_, n_;
  bool shuffle_, drop_;
  uint64_t seed_;
  std::vector<int64_t> order_;
  int64_t pos_ = 0;
};

}  // namespace spore::train
