// SPDX-License-Identifier: Apache-2.0
#include "spore/nn/embedding.h"

#include "spore/nn/init.h"
#include "spore/ops.h"

namespace spore::nn {

namespace {

std::optional<int64_t> checked_padding_idx(int64_t n, std::optional<int64_t> p) {
  if (!p) return p;
  SPORE_CHECK(*p >= -n && *p < n, "[Embedding] padding_idx ", *p, " is outside [", -n, ", ", n,
              ") for num_embeddings ", n);
  return *p < 0 ? *p + n : *p;
}

}  // namespace

Embedding::Embedding(int64_t n, int64_t d, std::optional<int64_t> padding_idx)
    : UnaryCell("Embedding"), num_embeddings(n), embedding_dim(d), padding_idx(checked_padding_idx(n, padding_idx)) {
  SPORE_CHECK(n > 0 && d > 0, "[Embedding] num_embeddings and embedding_dim must be positive, got ", n, " and ", d);
  weight = init::empty({n, d});
  register_parameter("weight", &weight);
  reset_own();  // the constructor draws what reset_parameters() redraws, by the same code
}

void Embedding::reset_own() {
  init::normal_(weight);
  if (padding_idx && weight.device().type != DeviceType::Meta) {
    Tensor row = ops::select(weight, 0, *padding_idx);  // a view: zeros the weight's row
    ops::fill_(row, 0.0);
  }
}

Tensor Embedding::construct(const Tensor& indices) {
  const Tensor rows = ops::embedding(weight, indices);
  if (!padding_idx) return rows;
  // The padding rows' values pass through without a cotangent, so the padding row's gradient is
  // zero (PyTorch skips it in the backward) whatever the value in it.
  const Tensor pad = ops::equal(indices, ops::scalar_tensor(*padding_idx, indices.dtype())).unsqueeze(-1);
  return ops::where(pad, ops::stop_gradient(rows), rows);
}

}  // namespace spore::nn
