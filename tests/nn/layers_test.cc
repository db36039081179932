// SPDX-License-Identifier: Apache-2.0
// Every layer's forward shape and mode behaviour; gradients through layers (value_and_grad +
// functional_call) against finite differences in float64; jit against eager.
#include <gtest/gtest.h>

#include "error_matchers.h"
#include "nn/nn_test_util.h"

namespace spore::nn {
namespace {

using testing::expect_input_grad_matches_fd;
using testing::expect_param_grads_match_fd;
using testing::max_abs_diff;

Tensor rnd(const Shape& s, DType dt = DType::Float32) { return ops::normal(s, 0, 1, {dt}); }

TEST(Layers, ForwardShapes) {
  manual_seed(0);
  EXPECT_EQ(Dense(4, 3)(rnd({2, 5, 4})).shape(), (Shape{2, 5, 3}));
  EXPECT_EQ(Dense(4, 3, false)(rnd({4})).shape(), (Shape{3}));
  EXPECT_EQ(Conv1d(3, 5, 3, 2, 1)(rnd({2, 3, 9})).shape(), (Shape{2, 5, 5}));
  EXPECT_EQ(Conv2d(3, 6, 5)(rnd({2, 3, 28, 28})).shape(), (Shape{2, 6, 24, 24}));
  EXPECT_EQ(Conv2d(4, 8, {3, 1}, 1, {1, 0}, 1, 2)(rnd({1, 4, 7, 7})).shape(), (Shape{1, 8, 7, 7}));
  EXPECT_EQ(Conv2dTranspose(4, 2, 3, 2, 1, 1)(rnd({1, 4, 5, 5})).shape(), (Shape{1, 2, 10, 10}));
  EXPECT_EQ(MaxPool2d(2)(rnd({1, 2, 6, 6})).shape(), (Shape{1, 2, 3, 3}));
  EXPECT_EQ(AvgPool2d(3, 2, 1)(rnd({1, 2, 6, 6})).shape(), (Shape{1, 2, 3, 3}));
  EXPECT_EQ(AdaptiveAvgPool2d(1)(rnd({2, 5, 7, 3})).shape(), (Shape{2, 5, 1, 1}));
  EXPECT_EQ(BatchNorm1d(3)(rnd({4, 3})).shape(), (Shape{4, 3}));
  EXPECT_EQ(BatchNorm2d(3)(rnd({2, 3, 4, 4})).shape(), (Shape{2, 3, 4, 4}));
  EXPECT_EQ(LayerNorm(6)(rnd({2, 6})).shape(), (Shape{2, 6}));
  EXPECT_EQ(GroupNorm(2, 4)(rnd({2, 4, 3})).shape(), (Shape{2, 4, 3}));
  EXPECT_EQ(RMSNorm(IntList{2, 3})(rnd({5, 2, 3})).shape(), (Shape{5, 2, 3}));
  EXPECT_EQ(Embedding(10, 4)(ops::tensor({{1, 2, 3}})).shape(), (Shape{1, 3, 4}));
  EXPECT_EQ(Flatten()(rnd({2, 3, 4})).shape(), (Shape{2, 12}));
  EXPECT_EQ(MultiheadAttention(8, 2, 0, true, true)(rnd({2, 5, 8}), rnd({2, 7, 8}), rnd({2, 7, 8})).shape(),
            (Shape{2, 5, 8}));
  EXPECT_EQ(MultiheadAttention(8, 2)(rnd({5, 2, 8}), rnd({7, 2, 8}), rnd({7, 2, 8})).shape(), (Shape{5, 2, 8}));
  TransformerOptions o{.dim_feedforward = 16, .dropout = 0.0, .batch_first = true};
  EXPECT_EQ(TransformerEncoderLayer(8, 2, o)(rnd({2, 5, 8})).shape(), (Shape{2, 5, 8}));
  EXPECT_EQ(TransformerDecoderLayer(8, 2, o)(rnd({2, 5, 8}), rnd({2, 3, 8})).shape(), (Shape{2, 5, 8}));
  auto lstm = LSTM(3, 4, {.num_layers = 2, .batch_first = true, .bidirectional = true})(rnd({2, 6, 3}));
  EXPECT_EQ(lstm.output.shape(), (Shape{2, 6, 8}));
  EXPECT_EQ(lstm.h_n.shape(), (Shape{4, 2, 4}));
  EXPECT_EQ(lstm.c_n.shape(), (Shape{4, 2, 4}));
  auto gru = GRU(3, 4)(rnd({6, 3}));
  EXPECT_EQ(gru.output.shape(), (Shape{6, 4}));
  EXPECT_EQ(gru.h_n.shape(), (Shape{1, 4}));
  EXPECT_EQ(SequentialCell(std::make_unique<ReLU>(), std::make_unique<GELU>(), std::make_unique<Sigmoid>(),
                           std::make_unique<Tanh>(), std::make_unique<SiLU>(), std::make_unique<LeakyReLU>(0.2),
                           std::make_unique<Softmax>(), std::make_unique<LogSoftmax>(1))(rnd({3, 4}))
                .shape(),
            (Shape{3, 4}));
}

TEST(Layers, ClearErrors) {
  EXPECT_ERROR(Dense(4, 3)(rnd({2, 5})), "[Dense] input has shape (2, 5) but the cell takes 4 features");
  EXPECT_ERROR(BatchNorm2d(3)(rnd({2, 3})), "[BatchNorm2d] input has shape (2, 3)");
  EXPECT_ERROR(Conv2d(3, 4, 3, 1, 0, 1, 2), "divisible by groups 2");
  EXPECT_ERROR(MultiheadAttention(6, 4), "multiple of num_heads");
  EXPECT_ERROR(LSTM(3, 4)(rnd({5, 2, 4})), "[LSTM] input has shape (5, 2, 4)");
}

TEST(Layers, DropoutAndBatchNormFollowTrainEval) {
  manual_seed(3);
  Dropout drop(0.5);
  const Tensor x = ops::ones({1000});
  const Tensor y = drop(x);
  const double zeros = ops::sum(ops::equal(y, ops::zeros_like(y))).item<int64_t>();
  EXPECT_GT(zeros, 400);
  EXPECT_LT(zeros, 600);
  drop.eval();
  EXPECT_EQ(max_abs_diff(drop(x), x), 0.0);

  BatchNorm1d bn(2, 1e-5, 0.5);
  const Tensor xb = ops::tensor({{1.f, 10.f}, {3.f, 20.f}});
  bn(xb);
  EXPECT_NEAR(bn.running_mean.to_vector<float>()[0], 1.0, 1e-6);  // 0.5 * 0 + 0.5 * 2
  EXPECT_NEAR(bn.running_var.to_vector<float>()[1], 0.5 + 0.5 * 50, 1e-4);
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);
  bn.eval();
  const Tensor ye = bn(xb);
  EXPECT_NEAR(ye.to_vector<float>()[0], 0.0, 1e-5);  // (1 - 1) / sqrt(1 + eps)
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);
}

// Gradients with respect to parameters and inputs of each layer, float64, against finite
// differences.
TEST(LayerGrads, MatchFiniteDifferences) {
  manual_seed(11);
  const DType f64 = DType::Float64;
  auto check_unary = [&](UnaryCell& cell, const Tensor& x) {
    cell.to(f64);
    const Tensor w = rnd(cell(x).shape(), f64);  // a random linear functional of the output
    expect_param_grads_match_fd(cell, [&] { return ops::sum(cell(x) * w); });
    expect_input_grad_matches_fd([&](const Tensor& xi) { return ops::sum(cell(xi) * w); }, x);
  };
  Dense dense(4, 3);
  check_unary(dense, rnd({2, 4}, f64));
  Conv1d c1(2, 3, 3, 1, 1);
  check_unary(c1, rnd({2, 2, 5}, f64));
  Conv2d c2(2, 4, 3, 2, 1, 1, 2);
  check_unary(c2, rnd({1, 2, 5, 5}, f64));
  Conv2dTranspose ct(2, 3, 3, 2, 1, 1);
  check_unary(ct, rnd({1, 2, 3, 3}, f64));
  BatchNorm2d bn(3);
  check_unary(bn, rnd({2, 3, 2, 2}, f64));
  LayerNorm ln(5);
  check_unary(ln, rnd({3, 5}, f64));
  GroupNorm gn(2, 4);
  check_unary(gn, rnd({2, 4, 3}, f64));
  RMSNorm rms(5);
  check_unary(rms, rnd({3, 5}, f64));
  TransformerEncoderLayer enc(4, 2, {.dim_feedforward = 6, .dropout = 0.0, .batch_first = true});
  check_unary(enc, rnd({2, 3, 4}, f64));
  TransformerEncoderLayer enc_pre(4, 2, {.dim_feedforward = 6, .dropout = 0.0, .activation = Activation::GELU,
                                         .norm_first = true});
  check_unary(enc_pre, rnd({3, 2, 4}, f64));

  Embedding emb(5, 3);
  emb.to(f64);
  const Tensor idx = ops::tensor({{0, 4, 4}, {2, 1, 0}});
  const Tensor we = rnd({2, 3, 3}, f64);
  expect_param_grads_match_fd(emb, [&] { return ops::sum(emb(idx) * we); });

  MultiheadAttention mha(4, 2, 0.0, true, true);
  mha.to(f64);
  const Tensor q = rnd({2, 3, 4}, f64), kv = rnd({2, 5, 4}, f64), wm = rnd({2, 3, 4}, f64);
  const Tensor pad = ops::tensor({{false, false, false, true, true}, {false, false, false, false, false}});
  expect_param_grads_match_fd(mha, [&] { return ops::sum(mha(q, kv, kv, {}, pad) * wm); });
  expect_input_grad_matches_fd([&](const Tensor& k) { return ops::sum(mha(q, k, k, {}, pad) * wm); }, kv);

  TransformerDecoderLayer dec(4, 2, {.dim_feedforward = 6, .dropout = 0.0, .batch_first = true});
  dec.to(f64);
  expect_param_grads_match_fd(dec, [&] { return ops::sum(dec(q, kv, {}, {}, {}, {}, true) * wm); });

  for (bool bidir : {false, true}) {
    LSTM lstm(3, 2, {.num_layers = 2, .bidirectional = bidir});
    lstm.to(f64);
    const Tensor xs = rnd({4, 2, 3}, f64);
    const Tensor wy = rnd({4, 2, bidir ? 4 : 2}, f64);
    expect_param_grads_match_fd(lstm, [&] {
      auto r = lstm(xs);
      return ops::sum(r.output * wy) + ops::sum(r.c_n);
    });
    GRU gru(3, 2, {.batch_first = true, .bidirectional = bidir});
    gru.to(f64);
    expect_param_grads_match_fd(gru, [&] {
      auto r = gru(xs);
      return ops::sum(r.output * wy) + ops::sum(r.h_n);
    });
  }
}

// The same results compiled as eagerly, for a forward and for a value_and_grad of a loss.
TEST(LayerJit, MatchesEager) {
  manual_seed(5);
  SequentialCell net(std::make_unique<Conv2d>(1, 4, 3, 1, 1), std::make_unique<BatchNorm2d>(4), std::make_unique<ReLU>(),
                     std::make_unique<MaxPool2d>(2), std::make_unique<Flatten>(), std::make_unique<Dense>(16, 3));
  net.eval();
  const Tensor x = rnd({2, 1, 4, 4});
  const Tensor y = ops::tensor({0, 2});
  auto fwd = jit([&](const Tensor& xi) { return net(xi); });
  EXPECT_LT(max_abs_diff(fwd(x), net(x)), 1e-5);
  auto loss = [&](const TensorTree& p) {
    return functional_call(net, p, [&] { return cross_entropy(net(x), y); });
  };
  auto eager = value_and_grad(loss)(net.parameter_tree());
  auto compiled = jit([&](const TensorTree& p) {
    auto [v, g] = value_and_grad(loss)(p);
    return TensorTree{TensorTree(v), g};
  })(net.parameter_tree());
  EXPECT_LT(max_abs_diff(compiled[0].tensor(), eager.first), 1e-5);
  const auto ge = eager.second.leaves(), gc = compiled[1].leaves();
  ASSERT_EQ(ge.size(), gc.size());
  for (size_t i = 0; i < ge.size(); ++i) EXPECT_LT(max_abs_diff(gc[i], ge[i]), 1e-5) << i;

  TransformerEncoderLayer enc(8, 2, {.dim_feedforward = 16, .dropout = 0.0, .batch_first = true});
  const Tensor xs = rnd({2, 5, 8});
  auto jenc = jit([&](const Tensor& xi) { return enc(xi); });
  EXPECT_LT(max_abs_diff(jenc(xs), enc(xs)), 1e-5);
}

// Training-mode BatchNorm under jit: running statistics are state the compiled call updates.
TEST(LayerJit, BatchNormTrainingUpdatesRunningStats) {
  BatchNorm1d eager(3), compiled(3);
  const Tensor x = rnd({6, 3}) * 2 + 1;
  auto f = jit([&](const Tensor& xi) { return compiled(xi); });
  const Tensor ye = eager(x), yc = f(x);
  EXPECT_LT(max_abs_diff(ye, yc), 1e-5);
  EXPECT_LT(max_abs_diff(eager.running_mean, compiled.running_mean), 1e-6);
  EXPECT_LT(max_abs_diff(eager.running_var, compiled.running_var), 1e-6);
  f(x);
  EXPECT_EQ(compiled.num_batches_tracked.item<int64_t>(), 2);
}

// LSTM and GRU compile to one loop each (one layer, one direction) and agree with eager.
TEST(RnnJit, OneScanAndSameResult) {
  manual_seed(9);
  LSTM lstm(3, 5, {.batch_first = true});
  GRU gru(3, 5);
  const Tensor x = rnd({2, 7, 3});
  auto jl = jit([&](const Tensor& xi) {
    auto r = lstm(xi);
    return TensorTree{TensorTree(r.output), TensorTree(r.h_n), TensorTree(r.c_n)};
  });
  const auto got = jl(x);
  const auto want = lstm(x);
  EXPECT_LT(max_abs_diff(got[0].tensor(), want.output), 1e-5);
  EXPECT_LT(max_abs_diff(got[2].tensor(), want.c_n), 1e-5);
  std::string text = jl.core().last_graph_text();
  auto count = [](const std::string& t, const std::string& op) {
    int n = 0;
    for (size_t p = t.find(" " + op + "{"); p != std::string::npos; p = t.find(" " + op + "{", p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(text, "scan"), 1) << text;
  const Tensor xt = x.transpose(0, 1);
  auto jg = jit([&](const Tensor& xi) { return gru(xi).output; });
  EXPECT_LT(max_abs_diff(jg(xt), gru(xt).output), 1e-5);
  EXPECT_EQ(count(jg.core().last_graph_text(), "scan"), 1) << jg.core().last_graph_text();
  // The gradient of a loss through the compiled loop equals the eager one.
  auto loss = [&](const TensorTree& p) { return functional_call(lstm, p, [&] { return ops::sum(lstm(x).output); }); };
  auto ge = grad(loss)(lstm.parameter_tree());
  auto gc = jit([&](const TensorTree& p) { return grad(loss)(p); })(lstm.parameter_tree());
  for (size_t i = 0; i < ge.leaves().size(); ++i) EXPECT_LT(max_abs_diff(gc.leaves()[i], ge.leaves()[i]), 1e-5) << i;
}

}  // namespace
}  // namespace spore::nn
