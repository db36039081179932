// SPDX-License-Identifier: Apache-2.0
#include "spore/nn/transformer.h"

#include "spore/ops.h"

namespace spore::nn {
namespace {
Tensor activate(const Tensor& x, Activation a) { return a == Activation::GELU ? ops::gelu(x) : ops::relu(x); }
}  // namespace

TransformerEncoderLayer::TransformerEncoderLayer(int64_t d_model, int64_t nhead, TransformerOptions o)
    : UnaryCell("TransformerEncoderLayer"), o_(o) {
  self_attn = std::make_unique<MultiheadAttention>(d_model, nhead, o.dropout, true, o.batch_first);
  linear1 = std::make_unique<Dense>(d_model, o.dim_feedforward);
  dropout = std::make_unique<Dropout>(o.dropout);
  linear2 = std::make_unique<Dense>(o.dim_feedforward, d_model);
  norm1 = std::make_unique<LayerNorm>(d_model, o.layer_norm_eps);
  norm2 = std::make_unique<LayerNorm>(d_model, o.layer_norm_eps);
  dropout1 = std::make_unique<Dropout>(o.dropout);
  dropout2 = std::make_unique<Dropout>(o.dropout);
  register_cell("self_attn", self_attn.get());
  register_cell("linear1", linear1.get());
  register_cell("dropout", dropout.get());
  register_cell("linear2", linear2.get());
  register_cell("norm1", norm1.get());
  register_cell("norm2", norm2.get());
  register_cell("dropout1", dropout1.get());
  register_cell("dropout2", dropout2.get());
}

Tensor TransformerEncoderLayer::feed_forward(const Tensor& x) {
  return (*dropout2)((*linear2)((*dropout)(activate((*linear1)(x), o_.activation))));
}

Tensor TransformerEncoderLayer::operator()(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask,
                                           bool is_causal) {
  auto sa = [&](const Tensor& x) {
    return (*dropout1)((*self_attn)(x, x, x, src_mask, src_key_padding_mask, is_causal));
  };
  if (o_.norm_first) {
    Tensor x = src + sa((*norm1)(src));
    return x + feed_forward((*norm2)(x));
  }
  Tensor x = (*norm1)(src + sa(src));
  return (*norm2)(x + feed_forward(x));
}

TransformerDecoderLayer::TransformerDecoderLayer(int64_t d_model, int64_t nhead, TransformerOptions o)
    : Cell("TransformerDecoderLayer"), o_(o) {
  self_attn = std::make_unique<MultiheadAttention>(d_model, nhead, o.dropout, true, o.batch_first);
  multihead_attn = std::make_unique<MultiheadAttention>(d_model, nhead, o.dropout, true, o.batch_first);
  linear1 = std::make_unique<Dense>(d_model, o.dim_feedforward);
  dropout = std::make_unique<Dropout>(o.dropout);
  linear2 = std::make_unique<Dense>(o.dim_feedforward, d_model);
  norm1 = std::make_unique<LayerNorm>(d_model, o.layer_norm_eps);
  norm2 = std::make_unique<LayerNorm>(d_model, o.layer_norm_eps);
  norm3 = std::make_unique<LayerNorm>(d_model, o.layer_norm_eps);
  dropout1 = std::make_unique<Dropout>(o.dropout);
  dropout2 = std::make_unique<Dropout>(o.dropout);
  dropout3 = std::make_unique<Dropout>(o.dropout);
  register_cell("self_attn", self_attn.get());
  register_cell("multihead_attn", multihead_attn.get());
  register_cell("linear1", linear1.get());
  register_cell("dropout", dropout.get());
  register_cell("linear2", linear2.get());
  register_cell("norm1", norm1.get());
  register_cell("norm2", norm2.get());
  register_cell("norm3", norm3.get());
  register_cell("dropout1", dropout1.get());
  register_cell("dropout2", dropout2.get());
  register_cell("dropout3", dropout3.get());
}

Tensor TransformerDecoderLayer::feed_forward(const Tensor& x) {
  return (*dropout3)((*linear2)((*dropout)(activate((*linear1)(x), o_.activation))));
}

Tensor TransformerDecoderLayer::operator()(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                           const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                           const Tensor& memory_key_padding_mask, bool tgt_is_causal) {
  auto sa = [&](const Tensor& x) {
    return (*dropout1)((*self_attn)(x, x, x, tgt_mask, tgt_key_padding_mask, tgt_is_causal));
  };
  auto mha = [&](const Tensor& x) {
    return (*dropout2)((*multihead_attn)(x, memory, memory, memory_mask, memory_key_padding_mask));
  };
  if (o_.norm_first) {
    Tensor x = tgt + sa((*norm1)(tgt));
    x = x + mha((*norm2)(x));
    return x + feed_forward((*norm3)(x));
  }
  Tensor x = (*norm1)(tgt + sa(tgt));
  x = (*norm2)(x + mha(x));
  return (*norm3)(x + feed_forward(x));
}

}  // namespace spore::nn
