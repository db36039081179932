// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "spore/nn/cell.h"

namespace spore::nn {

/// A lookup table: integer indices of any shape -> indices.shape + (embedding_dim,). The weight
/// (num_embeddings, embedding_dim) is drawn from N(0, 1), as PyTorch does.
class Embedding : public UnaryCell {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim);
  Tensor construct(const Tensor& indices) override;

  Tensor weight;
  const int64_t num_embeddings;
  const int64_t embedding_dim;
};

}  // namespace spore::nn
