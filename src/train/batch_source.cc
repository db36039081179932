// SPDX-License-Identifier: Apache-2.0
#include "spore/train/batch_source.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "spore/error.h"
#include "spore/ops.h"

namespace spore::train {

TensorBatches::TensorBatches(Tensor x, Tensor y, int64_t batch_size, bool shuffle, uint64_t seed, bool drop_remainder)
    : x_(std::move(x)), y_(std::move(y)), batch_(batch_size), shuffle_(shuffle), drop_(drop_remainder), seed_(seed) {
  SPORE_CHECK(x_.defined() && y_.defined() && x_.dim() >= 1 && y_.dim() >= 1, "[TensorBatches] needs inputs and labels with a sample dimension");
  SPORE_CHECK(x_.shape()[0] == y_.shape()[0], "[TensorBatches] inputs have ", x_.shape()[0], " samples but labels have ",
              y_.shape()[0]);
  SPORE_CHECK(batch_size >= 1, "[TensorBatches] batch_size must be at least 1, got ", batch_size);
  n_ = x_.shape()[0];
}

void TensorBatches::start_epoch(int64_t epoch, int64_t skip) {
  order_.resize(static_cast<size_t>(n_));
  std::iota(order_.begin(), order_.end(), 0);
  if (shuffle_) {
    // std::shuffle's algorithm is implementation-defined; a Fisher-Yates over mt19937_64
    // seeded by (seed, epoch) gives the same order on every standard library.
    std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch) + 1);
    for (int64_t i = n_ - 1; i > 0; --i) std::swap(order_[static_cast<size_t>(i)], order_[rng() % static_cast<uint64_t>(i + 1)]);
  }
  pos_ = std::min(n_, std::max<int64_t>(skip, 0) * batch_);
}

std::optional<Batch> TensorBatches::next() {
  const int64_t left = n_ - pos_;
  if (left <= 0 || (drop_ && left < batch_)) return std::nullopt;
  const int64_t k = std::min(left, batch_);
  std::vector<int64_t> idx(order_.begin() + pos_, order_.begin() + pos_ + k);
  pos_ += k;
  Tensor index = ops::from_vector(idx);
  return Batch{ops::index_select(x_, 0, index), ops::index_select(y_, 0, index)};
}

int64_t TensorBatches::batches_per_epoch() const { return drop_ ? n_ / batch_ : (n_ + batch_ - 1) / batch_; }
int64_t TensorBatches::samples_per_epoch() const { return drop_ ? n_ / batch_ * batch_ : n_; }

}  // namespace spore::train
