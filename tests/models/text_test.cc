// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <spore/models/text.h>
#include <spore/spore.h>

#include "error_matchers.h"
#include "models/few_steps.h"

namespace spore::models {
namespace {

// Expected counts from PyTorch 1.13 (/usr/bin/python3), the same networks written with torch.nn:
//   classifier: Embedding(100, 128) + a (1, 512, 128) parameter + 2 x TransformerEncoderLayer(128, 4, 256)
//               + Linear(128, 5)
//   LSTM:       Embedding(100, 64) + LSTM(64, 128[, num_layers=2, bidirectional=True]) + Linear(128 [256], 5)
//   GPT:        Embedding(256, 128) + Embedding(128, 128) + 4 x TransformerEncoderLayer(128, 4, 512,
//               norm_first=True) + LayerNorm(128) [+ Linear(128, 256, bias=False) untied]
TEST(TextModels, ParameterCountsMatchPyTorch) {
  EXPECT_EQ(transformer_classifier(100, 5)->num_parameters(), 343941);
  EXPECT_EQ(lstm_classifier(100, 5)->num_parameters(), 106373);
  EXPECT_EQ(LSTMClassifier(100, 5, 64, 128, 2, true).num_parameters(), 601605);
  EXPECT_EQ(gpt()->num_parameters(), 842496);
  EXPECT_EQ(gpt({.tie_weights = false})->num_parameters(), 875264);
}

TEST(TextModels, ForwardShapes) {
  manual_seed(0);
  Tensor ids = ops::randint(0, 100, {3, 7});
  EXPECT_EQ((*transformer_classifier(100, 5))(ids).shape(), (Shape{3, 5}));
  EXPECT_EQ((*lstm_classifier(100, 5))(ids).shape(), (Shape{3, 5}));
  LSTMClassifier bi(100, 4, 8, 6, 2, true);
  EXPECT_EQ(bi(ids).shape(), (Shape{3, 4}));
  auto g = gpt({.vocab_size = 100, .block_size = 16, .n_layer = 2, .n_embd = 32});
  EXPECT_EQ((*g)(ids).shape(), (Shape{3, 7, 100}));
  EXPECT_EQ(g->lm_head, nullptr);
  EXPECT_ERROR((*g)(ops::randint(0, 100, {1, 17})), "[GPT] sequence length 17 exceeds the model's maximum 16");
  EXPECT_ERROR((*g)(ops::normal({1, 4})), "[GPT] expects (N, T) integer token ids, got float32 (1, 4)");
  EXPECT_ERROR(gpt({.n_head = 3}), "n_embd 128 must be a positive multiple of n_head 3");
}

// Position t's logits see tokens 0..t only: changing the last token leaves every earlier position alone.
TEST(TextModels, GptIsCausal) {
  manual_seed(4);
  auto g = gpt({.vocab_size = 20, .block_size = 8, .n_layer = 2, .n_head = 2, .n_embd = 16, .tie_weights = false});
  g->eval();
  Tensor a = ops::from_vector<int64_t>({1, 5, 7, 2, 9, 3}, {1, 6});
  Tensor b = ops::from_vector<int64_t>({1, 5, 7, 2, 9, 11}, {1, 6});
  Tensor la = (*g)(a), lb = (*g)(b);
  EXPECT_TRUE(ops::all(ops::equal(ops::slice(la, 1, 0, 5), ops::slice(lb, 1, 0, 5))).item<bool>());
  EXPECT_FALSE(ops::all(ops::equal(ops::slice(la, 1, 5, 6), ops::slice(lb, 1, 5, 6))).item<bool>());
}

TEST(TextModels, ClassifiersFewStepsLowerTheLoss) {
  manual_seed(5);
  Tensor ids = ops::randint(0, 50, {8, 6});
  Tensor y = ops::from_vector<int64_t>({0, 1, 2, 3, 4, 0, 1, 2}, {8});
  auto tc = transformer_classifier(
      50, 5, {.d_model = 32, .nhead = 2, .num_layers = 2, .dim_feedforward = 64, .max_len = 16, .dropout = 0.0});
  auto [f1, l1] = first_and_last_loss(*tc, ids, y, 15, 3e-3);
  EXPECT_LT(l1, f1 * 0.7f);
  auto lstm = lstm_classifier(50, 5, 16, 32);
  auto [f2, l2] = first_and_last_loss(*lstm, ids, y, 15, 1e-2);
  EXPECT_LT(l2, f2 * 0.7f);
}

Tensor lm_loss(const Tensor& logits, const Tensor& targets) {
  return ops::cross_entropy(ops::flatten(logits, 0, 1), ops::flatten(targets));
}

TEST(TextModels, GptFewStepsLowerTheLoss) {
  for (bool tied : {true, false}) {
    manual_seed(6);
    auto g = gpt({.vocab_size = 16, .block_size = 8, .n_layer = 2, .n_head = 2, .n_embd = 32, .tie_weights = tied});
    Tensor seq = ops::randint(0, 16, {4, 9});
    Tensor x = ops::slice(seq, 1, 0, 8).contiguous(), y = ops::slice(seq, 1, 1, 9).contiguous();
    auto [first, last] = first_and_last_loss(*g, x, y, 12, 3e-3, lm_loss);
    EXPECT_LT(last, first * 0.8f) << "tied " << tied;
  }
}

}  // namespace
}  // namespace spore::models
