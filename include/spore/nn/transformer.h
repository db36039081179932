// SPDX-License-Identifier: Apache-2.0
#pragma once
// PyTorch's TransformerEncoderLayer and TransformerDecoderLayer, with the same child names
// (self_attn, linear1, linear2, norm1, ...) so parameter names match theirs.
#include <memory>

#include "spore/nn/attention.h"
#include "spore/nn/dense.h"
#include "spore/nn/dropout.h"
#include "spore/nn/normalization.h"

namespace spore::nn {

enum class Activation { ReLU, GELU };

struct TransformerOptions {
  int64_t dim_feedforward = 2048;
  double dropout = 0.1;
  Activation activation = Activation::ReLU;
  double layer_norm_eps = 1e-5;
  bool batch_first = false;
  /// Pre-norm (x + f(norm(x))) instead of post-norm (norm(x + f(x))).
  bool norm_first = false;
};

/// Self-attention then a feed-forward block, each with a residual connection.
class TransformerEncoderLayer : public UnaryCell {
 public:
  TransformerEncoderLayer(int64_t d_model, int64_t nhead, TransformerOptions o = {});
  Tensor operator()(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask = {},
                    bool is_causal = false);
  using UnaryCell::operator();
  Tensor construct(const Tensor& src) override { return (*this)(src, Tensor()); }

  std::unique_ptr<MultiheadAttention> self_attn;
  std::unique_ptr<Dense> linear1, linear2;
  std::unique_ptr<LayerNorm> norm1, norm2;
  std::unique_ptr<Dropout> dropout, dropout1, dropout2;

 private:
  Tensor feed_forward(const Tensor& x);
  TransformerOptions o_;
};

/// Self-attention, cross-attention over `memory`, then a feed-forward block.
class TransformerDecoderLayer : public Cell {
 public:
  TransformerDecoderLayer(int64_t d_model, int64_t nhead, TransformerOptions o = {});
  Tensor operator()(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {},
                    const Tensor& memory_mask = {}, const Tensor& tgt_key_padding_mask = {},
                    const Tensor& memory_key_padding_mask = {}, bool tgt_is_causal = false);

  std::unique_ptr<MultiheadAttention> self_attn, multihead_attn;
  std::unique_ptr<Dense> linear1, linear2;
  std::unique_ptr<LayerNorm> norm1, norm2, norm3;
  std::unique_ptr<Dropout> dropout, dropout1, dropout2, dropout3;

 private:
  Tensor feed_forward(const Tensor& x);
  TransformerOptions o_;
};

}  // namespace spore::nn
