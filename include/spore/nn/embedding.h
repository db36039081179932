// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <optional>

#include "spore/nn/cell.h"

namespace spore::nn {

/// A lookup table: integer indices of any shape -> indices.shape + (embedding_dim,). The weight
/// (num_embeddings, embedding_dim) is drawn from N(0, 1), as PyTorch does.
///
/// With `padding_idx` (PyTorch's; negative counts from the end) that row starts at zeros and
/// gets no gradient, so a padding token's vector stays what it is (zeros unless loaded) while
/// the rest train.
class Embedding : public UnaryCell {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx = std::nullopt);
  Tensor construct(const Tensor& indices) override;

  Tensor weight;
  const int64_t num_embeddings;
  const int64_t embedding_dim;
  const std::optional<int64_t> padding_idx;  // in [0, num_embeddings) when set

 protected:
  void reset_own() override;
};

}  // namespace spore::nn
