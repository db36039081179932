// SPDX-License-Identifier: Apache-2.0
#pragma once
// Sequence models over int64 token ids (N, T): a transformer encoder classifier, an LSTM
// classifier and a GPT-style decoder. Each is a UnaryCell, so train::Model trains it like an
// image model. Sub-cells keep PyTorch's names (nn.Embedding "weight", nn.LSTM "weight_ih_l0",
// nn.TransformerEncoderLayer "self_attn.in_proj_weight", ...), so parameter counts and
// state_dicts match the same network written with torch.nn.
#include <cstdint>
#include <memory>

#include "spore/nn/containers.h"
#include "spore/nn/dense.h"
#include "spore/nn/dropout.h"
#include "spore/nn/embedding.h"
#include "spore/nn/normalization.h"
#include "spore/nn/rnn.h"

namespace spore::models {

struct TextEncoderOptions {
  int64_t d_model = 128;
  int64_t nhead = 4;
  int64_t num_layers = 2;
  int64_t dim_feedforward = 256;
  int64_t max_len = 512;  // longest sequence the position embedding covers
  double dropout = 0.1;
  /// The padding token of right-padded batches (data::BatchPad's value); -1: none. Padding
  /// positions are masked out of attention (a key padding mask) and of the mean, and the
  /// embedding keeps the padding row at zeros, so a padded sequence classifies as it would alone.
  /// A row of padding alone reads its first position (finite logits, never NaN).
  int64_t pad_id = -1;
};

/// Token + learned position embedding, post-norm encoder layers, mean over time, Dense:
/// (N, T) ids -> (N, num_classes) logits.
class TransformerClassifier : public nn::UnaryCell {
 public:
  TransformerClassifier(int64_t vocab_size, int64_t num_classes, TextEncoderOptions o = {});
  Tensor construct(const Tensor& ids) override;
  /// The children in the constructor's order with the positions' N(0, 0.02) between them.
  void reset_own() override;

  std::unique_ptr<nn::Embedding> embedding;
  Tensor pos_embedding;  // (1, max_len, d_model), N(0, 0.02)
  std::unique_ptr<nn::Dropout> dropout;
  std::unique_ptr<nn::CellList> layers;  // nn::TransformerEncoderLayer, batch first
  std::unique_ptr<nn::Dense> fc;

 private:
  TextEncoderOptions o_;
};

/// Embedding, LSTM (batch first), Dense on the last layer's final hidden state (both directions'
/// concatenated when bidirectional): (N, T) ids -> (N, num_classes) logits.
///
/// With `pad_id` >= 0 the batch is right-padded with that token: each sequence runs to its last
/// other token (seq_length; a row of padding alone keeps the initial state), and the embedding
/// keeps the padding row at zeros.
class LSTMClassifier : public nn::UnaryCell {
 public:
  LSTMClassifier(int64_t vocab_size, int64_t num_classes, int64_t embed_dim = 64, int64_t hidden_size = 128,
                 int64_t num_layers = 1, bool bidirectional = false, int64_t pad_id = -1);
  Tensor construct(const Tensor& ids) override;

  std::unique_ptr<nn::Embedding> embedding;
  std::unique_ptr<nn::LSTM> lstm;
  std::unique_ptr<nn::Dense> fc;

 private:
  int64_t pad_id_;
};

struct GPTOptions {
  int64_t vocab_size = 256;
  int64_t block_size = 128;  // longest context
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t n_embd = 128;
  double dropout = 0.0;
  /// The LM head reuses the token embedding's weight (GPT-2); no lm_head parameter then.
  bool tie_weights = true;
};

/// A GPT-style decoder: token + position embeddings, pre-norm causal self-attention blocks
/// (nn::TransformerEncoderLayer with norm_first, GELU, a 4x MLP and a causal mask), a final
/// LayerNorm and the LM head: (N, T) ids with T <= block_size -> (N, T, vocab_size) logits.
/// Right-padded batches need no mask: causal attention never lets a real position see the
/// padding after it; leave the padding out of the loss with cross_entropy's ignore_index.
class GPT : public nn::UnaryCell {
 public:
  explicit GPT(GPTOptions o = {});
  Tensor construct(const Tensor& ids) override;
  /// The embeddings' default draw, then their N(0, 0.02), then the blocks: the constructor's order.
  void reset_own() override;
  const GPTOptions& options() const { return o_; }

  std::unique_ptr<nn::Embedding> tok_embedding, pos_embedding;  // both N(0, 0.02)
  std::unique_ptr<nn::Dropout> dropout;
  std::unique_ptr<nn::CellList> layers;
  std::unique_ptr<nn::LayerNorm> norm;
  std::unique_ptr<nn::Dense> lm_head;  // null when tie_weights

 private:
  GPTOptions o_;
};

/// `transformer_classifier(vocab, classes)`: 2 post-norm layers of width 128, 4 heads, up to 512 tokens.
std::unique_ptr<TransformerClassifier> transformer_classifier(int64_t vocab_size, int64_t num_classes,
                                                              TextEncoderOptions o = {});
/// `lstm_classifier(vocab, classes)`: a one-layer, one-direction LSTM classifier.
std::unique_ptr<LSTMClassifier> lstm_classifier(int64_t vocab_size, int64_t num_classes, int64_t embed_dim = 64,
                                                int64_t hidden_size = 128, int64_t pad_id = -1);
/// `gpt({.vocab_size = 65, .block_size = 64})`: a small GPT (4 layers, width 128, tied head by default).
std::unique_ptr<GPT> gpt(GPTOptions o = {});

}  // namespace spore::models
