// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <memory>

#include "spore/nn/cell.h"
#include "spore/nn/dense.h"

namespace spore::nn {

/// PyTorch's nn.MultiheadAttention (same parameters: in_proj_weight (3E, E), in_proj_bias (3E),
/// out_proj.weight/bias) for equal query/key/value widths. Inputs are (L, N, E), or (N, L, E)
/// with batch_first, or unbatched (L, E). Masks follow PyTorch's module: a bool attn_mask or
/// key_padding_mask is true where attention is NOT allowed; a float one is added to the scores.
/// attn_mask is (L, S) or (N * num_heads, L, S); key_padding_mask is (N, S).
class MultiheadAttention : public Cell {
 public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout = 0.0, bool bias = true,
                     bool batch_first = false);
  Tensor operator()(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask = {},
                    const Tensor& key_padding_mask = {}, bool is_causal = false);

  Tensor in_proj_weight;
  Tensor in_proj_bias;
  std::unique_ptr<Dense> out_proj;
  int64_t embed_dim() const { return embed_dim_; }
  int64_t num_heads() const { return num_heads_; }
  bool batch_first() const { return batch_first_; }

 protected:
  /// in_proj_weight xavier-uniform, biases zero, out_proj's weight redrawn where the
  /// constructor built it.
  void reset_own() override;

 private:
  int64_t embed_dim_, num_heads_;
  double dropout_;
  bool batch_first_;
};

}  // namespace spore::nn
