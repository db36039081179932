// SPDX-License-Identifier: Apache-2.0
// Right-padded text batches: a padded sequence gets the logits it gets alone, in both modes.
// (The recurrent layers' seq_length and Embedding's padding_idx are checked against PyTorch's
// packed sequences and padding_idx in the oracle, tests/oracle/cases_nn_layers.cc.)
#include <gtest/gtest.h>
#include <spore/data/dataset.h>
#include <spore/data/sources.h>
#include <spore/models/text.h>
#include <spore/spore.h>

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "error_matchers.h"

namespace spore::models {
namespace {

constexpr int64_t kPad = 0;

// Three sequences of lengths 5, 2 and 4 over tokens 1..19, right-padded with kPad to 5.
const std::vector<std::vector<int64_t>> kSeqs = {{3, 7, 1, 9, 4}, {12, 5}, {8, 8, 2, 17}};

Tensor padded_batch() {
  std::vector<int64_t> v;
  for (const auto& s : kSeqs)
    for (size_t t = 0; t < 5; ++t) v.push_back(t < s.size() ? s[t] : kPad);
  return ops::from_vector<int64_t>(v, {3, 5});
}

Tensor alone(size_t i) {
  return ops::from_vector<int64_t>(kSeqs[i], {1, static_cast<int64_t>(kSeqs[i].size())});
}

double max_abs_diff(const Tensor& a, const Tensor& b) { return ops::amax(ops::abs(a - b)).item<double>(); }

// Each row of the padded batch's logits against the sequence run by itself.
void expect_rows_match_alone(nn::UnaryCell& net, const char* what) {
  const Tensor batch = net(padded_batch());
  for (size_t i = 0; i < kSeqs.size(); ++i) {
    const Tensor row = ops::slice(batch, 0, static_cast<int64_t>(i), static_cast<int64_t>(i) + 1);
    EXPECT_LT(max_abs_diff(row, net(alone(i))), 2e-6) << what << ", sequence " << i;
  }
}

TEST(TextPadding, TransformerClassifierMasksThePadding) {
  manual_seed(1);
  const TextEncoderOptions o{.d_model = 16, .nhead = 2, .num_layers = 2, .dim_feedforward = 32, .max_len = 8,
                             .dropout = 0.0, .pad_id = kPad};
  TransformerClassifier net(20, 3, o);
  net.eval();
  EXPECT_TRUE(ops::all(ops::equal(ops::select(net.embedding->weight, 0, kPad), ops::zeros({16}))).item<bool>());
  expect_rows_match_alone(net, "transformer");
  // The same weights without the mask see the padding: the short sequence's logits move.
  TransformerClassifier unmasked(20, 3, {.d_model = 16, .nhead = 2, .num_layers = 2, .dim_feedforward = 32,
                                         .max_len = 8, .dropout = 0.0});
  unmasked.load_state_dict(net.state_dict());
  unmasked.eval();
  const Tensor short_row = ops::slice(unmasked(padded_batch()), 0, 1, 2);
  EXPECT_GT(max_abs_diff(short_row, unmasked(alone(1))), 1e-3);
}

TEST(TextPadding, LstmClassifierStopsEachSequenceAtItsLength) {
  manual_seed(2);
  for (bool bi : {false, true}) {
    LSTMClassifier net(20, 3, 8, 6, /*num_layers=*/2, bi, kPad);
    expect_rows_match_alone(net, bi ? "bidirectional lstm" : "lstm");
    LSTMClassifier unmasked(20, 3, 8, 6, 2, bi);
    unmasked.load_state_dict(net.state_dict());
    const Tensor short_row = ops::slice(unmasked(padded_batch()), 0, 1, 2);
    EXPECT_GT(max_abs_diff(short_row, unmasked(alone(1))), 1e-3) << bi;
  }
}

// The data pipeline's padded batch feeds the classifier directly: batch(pad = kPad) right-pads.
TEST(TextPadding, PipelinePaddedBatchesClassifyLikeSequencesAlone) {
  auto ds = data::generator([](int64_t i) -> std::optional<data::Row> {
    if (i >= static_cast<int64_t>(kSeqs.size())) return std::nullopt;
    return data::Row{ops::from_vector<int64_t>(kSeqs[static_cast<size_t>(i)])};
  });
  auto it = ds->batch(3, false, data::BatchPad{kPad, {}})->iterate();
  const data::Row b = *it.next();
  EXPECT_TRUE(ops::all(ops::equal(b[0], padded_batch())).item<bool>());
  manual_seed(7);
  LSTMClassifier net(20, 3, 8, 6, 1, true, kPad);
  const Tensor logits = net(b[0]);
  for (size_t i = 0; i < kSeqs.size(); ++i)
    EXPECT_LT(max_abs_diff(ops::slice(logits, 0, static_cast<int64_t>(i), static_cast<int64_t>(i) + 1), net(alone(i))), 2e-6);
}

// One compiled graph serves batches whose lengths differ: the mask is data, not part of the key.
TEST(TextPadding, JitLstmClassifierEqualsPyNativeForEveryLengthMix) {
  manual_seed(3);
  LSTMClassifier net(20, 3, 8, 6, 1, true, kPad);
  auto f = jit([&](const Tensor& ids) { return net(ids); });
  const Tensor a = padded_batch();
  Tensor b = a.clone();
  b.data<int64_t>()[4] = kPad;  // the first sequence now has 4 tokens
  for (const Tensor& ids : {a, b}) EXPECT_LT(max_abs_diff(f(ids), net(ids)), 1e-6);
  EXPECT_EQ(f.core().traces(), 1);
  EXPECT_GT(max_abs_diff(f(a), f(b)), 1e-4);
}

TEST(TextPadding, JitTransformerClassifierEqualsPyNative) {
  manual_seed(4);
  TransformerClassifier net(20, 3, {.d_model = 16, .nhead = 2, .num_layers = 1, .dim_feedforward = 32, .max_len = 8,
                                    .dropout = 0.0, .pad_id = kPad});
  net.eval();
  auto f = jit([&](const Tensor& ids) { return net(ids); });
  EXPECT_LT(max_abs_diff(f(padded_batch()), net(padded_batch())), 1e-5);
}

// padding_idx's row gets no gradient whatever reads it, and its value still passes through.
TEST(TextPadding, EmbeddingPaddingRowPassesItsValueAndGetsNoGradient) {
  manual_seed(5);
  const Tensor ids = ops::from_vector<int64_t>({2, 0, 0, 3, 0, 1}, {2, 3});
  for (bool with_padding : {true, false}) {
    nn::Embedding emb(4, 3, with_padding ? std::optional<int64_t>(0) : std::nullopt);
    ops::copy_(emb.weight, ops::normal({4, 3}));  // a loaded, non-zero padding row
    const Tensor ct = ops::normal({2, 3, 3});
    auto [out, g] = value_and_grad([&](const TensorTree& p) {
      return nn::functional_call(emb, p, [&] { return ops::sum(emb(ids) * ct); });
    })(emb.parameter_tree());
    const Tensor gw = g["weight"].tensor();
    EXPECT_EQ(ops::all(ops::equal(ops::select(gw, 0, 0), ops::zeros({3}))).item<bool>(), with_padding);
    EXPECT_TRUE(ops::all(ops::equal(ops::select(emb(ids), 1, 1), ops::select(emb.weight, 0, 0).unsqueeze(0).expand({2, 3})))
                    .item<bool>());
    EXPECT_GT(ops::amax(ops::abs(ops::select(gw, 0, 3))).item<double>(), 0.0);  // a real token's row moves
  }
}

// Not even an inf in the padding reaches a gradient: steps past a length are never read.
TEST(TextPadding, PaddingOfAnyValueReachesNoGradient) {
  manual_seed(8);
  nn::LSTM lstm(3, 4, {.batch_first = true, .bidirectional = true});
  Tensor x = ops::normal({2, 4, 3});
  x.data<float>()[1 * 12 + 3 * 3] = std::numeric_limits<float>::infinity();  // sequence 1, step 3: padding
  const Tensor len = ops::from_vector<int64_t>({4, 3}, {2});
  auto [out, g] = value_and_grad([&](const TensorTree& p) {
    return nn::functional_call(lstm, p, [&] { return ops::sum(lstm(x, {}, {}, len).h_n); });
  })(lstm.parameter_tree());
  EXPECT_TRUE(std::isfinite(out.item<double>()));
  for (const Tensor& t : g.leaves()) EXPECT_TRUE(ops::all(ops::isfinite(t)).item<bool>());
}

// A row of padding alone (an empty example) gets finite logits in both modes; a pad id inside a
// sequence is one of its tokens for the LSTM (it runs to the last other token).
TEST(TextPadding, EmptyRowsAndInnerPadTokensAreDefined) {
  manual_seed(9);
  TransformerClassifier tc(20, 3, {.d_model = 16, .nhead = 2, .num_layers = 1, .dim_feedforward = 32, .max_len = 8,
                                   .dropout = 0.0, .pad_id = kPad});
  tc.eval();
  const Tensor empty = ops::from_vector<int64_t>({3, 7, 1, kPad, kPad, kPad}, {2, 3});
  const Tensor eager = tc(empty);
  EXPECT_TRUE(ops::all(ops::isfinite(eager)).item<bool>()) << eager.str();
  auto f = jit([&](const Tensor& ids) { return tc(ids); });
  EXPECT_LT(max_abs_diff(f(empty), eager), 1e-5);
  LSTMClassifier lc(20, 3, 8, 6, 1, true, kPad);
  const Tensor inner = ops::from_vector<int64_t>({3, kPad, 7, kPad, kPad}, {1, 5});
  EXPECT_LT(max_abs_diff(lc(inner), lc(ops::from_vector<int64_t>({3, kPad, 7}, {1, 3}))), 2e-6);
  EXPECT_GT(max_abs_diff(lc(inner), lc(ops::from_vector<int64_t>({3, 7}, {1, 2}))), 1e-4);
}

TEST(TextPadding, BadArgumentsNameTheFix) {
  EXPECT_ERROR(LSTMClassifier(20, 3, 8, 6, 1, false, 20), "[LSTMClassifier] pad_id 20 must be a token id in [0, 20)");
  EXPECT_ERROR(TransformerClassifier(20, 3, {.pad_id = -2}), "[TransformerClassifier] pad_id -2 must be a token id");
  EXPECT_ERROR(nn::Embedding(10, 4, 10), "[Embedding] padding_idx 10 is outside [-10, 10)");
  EXPECT_EQ(*nn::Embedding(10, 4, -1).padding_idx, 9);
  nn::LSTM lstm(3, 4);
  const Tensor x = ops::normal({5, 2, 3});
  EXPECT_ERROR(lstm(x, {}, {}, ops::from_vector<int64_t>({5, 2, 1}, {3})),
               "[LSTM] seq_length has shape (3,) and dtype int64; expected (2,) integer lengths");
  EXPECT_ERROR(lstm(x, {}, {}, ops::from_vector<float>({5, 2}, {2})), "dtype float32; expected (2,) integer lengths");
  EXPECT_ERROR(lstm(x, {}, {}, ops::from_vector<int64_t>({6, 2}, {2})),
               "[LSTM] seq_length holds 6, outside [0, 5] for sequences of 5 steps; pad the input to the longest length");
  nn::GRU gru(3, 4);
  EXPECT_ERROR(gru(ops::normal({5, 3}), {}, ops::from_vector<int64_t>({5}, {1})),
               "[GRU] seq_length for an unbatched input is one 0-d integer length, got int64 of shape (1,)");
}

// An unbatched sequence with a length: the steps past it output zeros and leave the state.
TEST(TextPadding, UnbatchedGruWithALength) {
  manual_seed(6);
  nn::GRU gru(3, 4);
  const Tensor x = ops::normal({5, 3});
  auto full = gru(ops::slice(x, 0, 0, 3));
  auto cut = gru(x, {}, ops::scalar_tensor(int64_t{3}, DType::Int64));
  EXPECT_LT(max_abs_diff(cut.h_n, full.h_n), 1e-7);
  EXPECT_LT(max_abs_diff(ops::slice(cut.output, 0, 0, 3), full.output), 1e-7);
  EXPECT_TRUE(ops::all(ops::equal(ops::slice(cut.output, 0, 3, 5), ops::zeros({2, 4}))).item<bool>());
}

}  // namespace
}  // namespace spore::models
