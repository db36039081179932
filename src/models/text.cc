// SPDX-License-Identifier: Apache-2.0
#include "spore/models/text.h"

#include "spore/error.h"
#include "spore/nn/init.h"
#include "spore/nn/transformer.h"
#include "spore/ops.h"

namespace spore::models {
namespace {

void check_ids(const char* model, const Tensor& ids, int64_t max_len) {
  SPORE_CHECK(ids.dim() == 2 && !is_floating(ids.dtype()), "[", model, "] expects (N, T) integer token ids, got ",
              dtype_name(ids.dtype()), " ", shape_str(ids.shape()));
  SPORE_CHECK(max_len <= 0 || is_symbolic(ids.shape()[1]) || ids.shape()[1] <= max_len, "[", model,
              "] sequence length ", ids.shape()[1], " exceeds the model's maximum ", max_len,
              "; build it with a larger max_len/block_size");
}

// (N, T) int64: each token's position t. From a cumulative sum, so a symbolic T traces too.
Tensor position_ids(const Tensor& ids) {
  return ops::cumsum(ops::ones_like(ids).to(DType::Int64), 1) - int64_t{1};
}

void check_pad_id(const char* model, int64_t pad_id, int64_t vocab_size) {
  SPORE_CHECK(pad_id >= -1 && pad_id < vocab_size, "[", model, "] pad_id ", pad_id, " must be a token id in [0, ",
              vocab_size, ") or -1 for no padding");
}

std::optional<int64_t> padding_row(int64_t pad_id) {
  return pad_id >= 0 ? std::optional<int64_t>(pad_id) : std::nullopt;
}

}  // namespace

TransformerClassifier::TransformerClassifier(int64_t vocab_size, int64_t num_classes, TextEncoderOptions o)
    : nn::UnaryCell("TransformerClassifier"), o_(o) {
  SPORE_CHECK(vocab_size > 0 && num_classes > 0 && o.num_layers > 0 && o.max_len > 0,
              "[TransformerClassifier] vocab_size, num_classes, num_layers and max_len must be positive");
  check_pad_id("TransformerClassifier", o.pad_id, vocab_size);
  embedding = std::make_unique<nn::Embedding>(vocab_size, o.d_model, padding_row(o.pad_id));
  pos_embedding = nn::init::normal({1, o.max_len, o.d_model}, 0.0, 0.02);  // reset_own repeats this order
  dropout = std::make_unique<nn::Dropout>(o.dropout);
  layers = std::make_unique<nn::CellList>();
  const nn::TransformerOptions lo{.dim_feedforward = o.dim_feedforward, .dropout = o.dropout, .batch_first = true};
  for (int64_t i = 0; i < o.num_layers; ++i)
    layers->append(std::make_unique<nn::TransformerEncoderLayer>(o.d_model, o.nhead, lo));
  fc = std::make_unique<nn::Dense>(o.d_model, num_classes);
  register_cell("embedding", embedding.get());
  register_parameter("pos_embedding", &pos_embedding);
  register_cell("dropout", dropout.get());
  register_cell("layers", layers.get());
  register_cell("fc", fc.get());
}

void TransformerClassifier::reset_own() {
  reset_child(*embedding);
  nn::init::normal_(pos_embedding, 0.0, 0.02);
  reset_child(*dropout);
  reset_child(*layers);
  reset_child(*fc);
}

Tensor TransformerClassifier::construct(const Tensor& ids) {
  check_ids("TransformerClassifier", ids, o_.max_len);
  Tensor h = (*embedding)(ids) + ops::slice(pos_embedding, 1, 0, ids.shape()[1]);
  h = (*dropout)(h);
  if (o_.pad_id < 0) {
    for (size_t i = 0; i < layers->size(); ++i) h = layers->at<nn::TransformerEncoderLayer>(i)(h);
    return (*fc)(ops::mean(h, {1}));
  }
  Tensor pad = ops::equal(ids, ops::scalar_tensor(o_.pad_id, ids.dtype()));  // (N, T), true at padding
  // A row of padding alone (an empty example) would mask every key (softmax of -inf: NaN) and
  // average nothing: it attends to its first position instead and gets finite logits.
  const Tensor first = ops::equal(position_ids(ids), ops::scalar_tensor(int64_t{0}, DType::Int64));
  pad = ops::logical_and(pad, ops::logical_not(ops::logical_and(ops::all(pad, {1}, true), first)));
  for (size_t i = 0; i < layers->size(); ++i) h = layers->at<nn::TransformerEncoderLayer>(i)(h, {}, pad);
  // The mean over each sequence's own tokens.
  const Tensor keep = ops::logical_not(pad).to(h.dtype()).unsqueeze(-1);  // (N, T, 1)
  return (*fc)(ops::sum(h * keep, {1}) / ops::sum(keep, {1}));
}

LSTMClassifier::LSTMClassifier(int64_t vocab_size, int64_t num_classes, int64_t embed_dim, int64_t hidden_size,
                               int64_t num_layers, bool bidirectional, int64_t pad_id)
    : nn::UnaryCell("LSTMClassifier"), pad_id_(pad_id) {
  SPORE_CHECK(vocab_size > 0 && num_classes > 0 && embed_dim > 0 && hidden_size > 0,
              "[LSTMClassifier] vocab_size, num_classes, embed_dim and hidden_size must be positive");
  check_pad_id("LSTMClassifier", pad_id, vocab_size);
  embedding = std::make_unique<nn::Embedding>(vocab_size, embed_dim, padding_row(pad_id));
  lstm = std::make_unique<nn::LSTM>(
      embed_dim, hidden_size,
      nn::RNNOptions{.num_layers = num_layers, .batch_first = true, .bidirectional = bidirectional});
  fc = std::make_unique<nn::Dense>(hidden_size * (bidirectional ? 2 : 1), num_classes);
  register_cell("embedding", embedding.get());
  register_cell("lstm", lstm.get());
  register_cell("fc", fc.get());
}

Tensor LSTMClassifier::construct(const Tensor& ids) {
  check_ids("LSTMClassifier", ids, 0);
  // Each sequence runs to its last token that is not padding (a pad id inside a sequence is
  // one of its tokens, and reads as the zero vector).
  Tensor lengths;
  if (pad_id_ >= 0) {
    const Tensor real = ops::not_equal(ids, ops::scalar_tensor(pad_id_, ids.dtype())).to(DType::Int64);
    lengths = ops::amax((position_ids(ids) + int64_t{1}) * real, {1});
  }
  const Tensor h_n = (*lstm)((*embedding)(ids), {}, {}, lengths).h_n;  // (layers * dirs, N, H)
  const auto& o = lstm->options();
  const int64_t layers = o.num_layers, dirs = o.bidirectional ? 2 : 1;
  // The last layer's final state; both directions side by side when bidirectional.
  Tensor last = ops::slice(h_n, 0, (layers - 1) * dirs, layers * dirs);
  return (*fc)(ops::flatten(ops::transpose(last, 0, 1), 1));
}

GPT::GPT(GPTOptions o) : nn::UnaryCell("GPT"), o_(o) {
  SPORE_CHECK(o.vocab_size > 0 && o.block_size > 0 && o.n_layer > 0, "[GPT] vocab_size, block_size and n_layer must ",
              "be positive, got ", o.vocab_size, ", ", o.block_size, ", ", o.n_layer);
  SPORE_CHECK(o.n_head > 0 && o.n_embd > 0 && o.n_embd % o.n_head == 0, "[GPT] n_embd ", o.n_embd,
              " must be a positive multiple of n_head ", o.n_head);
  tok_embedding = std::make_unique<nn::Embedding>(o.vocab_size, o.n_embd);
  pos_embedding = std::make_unique<nn::Embedding>(o.block_size, o.n_embd);
  // GPT-2's N(0, 0.02): N(0, 1) embeddings tied to the head would start with huge logits.
  // reset_own repeats these draws in this order.
  nn::init::normal_(tok_embedding->weight, 0.0, 0.02);
  nn::init::normal_(pos_embedding->weight, 0.0, 0.02);
  dropout = std::make_unique<nn::Dropout>(o.dropout);
  layers = std::make_unique<nn::CellList>();
  const nn::TransformerOptions lo{.dim_feedforward = 4 * o.n_embd,
                                  .dropout = o.dropout,
                                  .activation = nn::Activation::GELU,
                                  .batch_first = true,
                                  .norm_first = true};
  for (int64_t i = 0; i < o.n_layer; ++i)
    layers->append(std::make_unique<nn::TransformerEncoderLayer>(o.n_embd, o.n_head, lo));
  norm = std::make_unique<nn::LayerNorm>(o.n_embd);
  register_cell("tok_embedding", tok_embedding.get());
  register_cell("pos_embedding", pos_embedding.get());
  register_cell("dropout", dropout.get());
  register_cell("layers", layers.get());
  register_cell("norm", norm.get());
  if (!o.tie_weights) {
    lm_head = std::make_unique<nn::Dense>(o.n_embd, o.vocab_size, /*bias=*/false);
    register_cell("lm_head", lm_head.get());
  }
}

void GPT::reset_own() {
  reset_child(*tok_embedding);
  reset_child(*pos_embedding);
  nn::init::normal_(tok_embedding->weight, 0.0, 0.02);
  nn::init::normal_(pos_embedding->weight, 0.0, 0.02);
  reset_child(*dropout);
  reset_child(*layers);
  reset_child(*norm);
  if (lm_head) reset_child(*lm_head);
}

Tensor GPT::construct(const Tensor& ids) {
  check_ids("GPT", ids, o_.block_size);
  // Positions 0..T-1 are the first T rows: a slice, the same as looking up arange(T).
  Tensor h = (*dropout)((*tok_embedding)(ids) + ops::slice(pos_embedding->weight, 0, 0, ids.shape()[1]));
  for (size_t i = 0; i < layers->size(); ++i)
    h = layers->at<nn::TransformerEncoderLayer>(i)(h, Tensor(), Tensor(), /*is_causal=*/true);
  h = (*norm)(h);
  return lm_head ? (*lm_head)(h) : ops::matmul(h, ops::transpose(tok_embedding->weight, 0, 1));
}

std::unique_ptr<TransformerClassifier> transformer_classifier(int64_t vocab_size, int64_t num_classes,
                                                              TextEncoderOptions o) {
  return std::make_unique<TransformerClassifier>(vocab_size, num_classes, o);
}

std::unique_ptr<LSTMClassifier> lstm_classifier(int64_t vocab_size, int64_t num_classes, int64_t embed_dim,
                                                int64_t hidden_size, int64_t pad_id) {
  return std::make_unique<LSTMClassifier>(vocab_size, num_classes, embed_dim, hidden_size, 1, false, pad_id);
}

std::unique_ptr<GPT> gpt(GPTOptions o) { return std::make_unique<GPT>(o); }

}  // namespace spore::models
