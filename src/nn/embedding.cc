// SPDX-License-Identifier: Apache-2.0
#include "spore/nn/embedding.h"

#include "spore/nn/init.h"
#include "spore/ops.h"

namespace spore::nn {

Embedding::Embedding(int64_t n, int64_t d) : UnaryCell("Embedding"), num_embeddings(n), embedding_dim(d) {
  SPORE_CHECK(n > 0 && d > 0, "[Embedding] num_embeddings and embedding_dim must be positive, got ", n, " and ", d);
  weight = init::normal({n, d});
  register_parameter("weight", &weight);
}

Tensor Embedding::construct(const Tensor& indices) { return ops::embedding(weight, indices); }

}  // namespace spore::nn
