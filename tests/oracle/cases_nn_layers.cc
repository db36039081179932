// SPDX-License-Identifier: Apache-2.0
// Oracle cases for spore::nn cells and losses. A "layer" case builds torch.nn.<module> with the
// same constructor arguments, copies Spore's parameters (and buffers) into it and compares the
// forward outputs, the buffers after the call, and the gradients of the first output (for a
// random cotangent) with respect to every floating input and every parameter. A "loss" case
// compares torch.nn.functional.<fn> and its gradient with respect to the input.
#include <functional>
#include <sstream>

#include <spore/nn.h>

#include "oracle.h"

namespace spore::oracle {
namespace {

using nn::Cell;

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

// Attribute strings go into the manifest unescaped: JSON kwargs travel with single quotes.
std::string quoted(std::string s) {
  for (char& c : s)
    if (c == '"') c = '\'';
  return s;
}

using Forward = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// `inputs`: the call's tensors (undefined ones are absent masks); floating ones are differentiated.
void add_layer(Writer& w, uint64_t& seed, const std::string& module, const std::string& kwargs, const std::string& call,
               Cell& cell, const std::vector<Tensor>& inputs, const Forward& fwd, CaseOptions opt = {}) {
  std::vector<int> diff;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && is_floating(inputs[i].dtype())) diff.push_back(static_cast<int>(i));
  std::vector<std::string> pnames, bnames;
  std::vector<Tensor> pvals, bvals;
  for (auto& [n, t] : cell.named_parameters()) pnames.push_back(n), pvals.push_back(t);
  for (auto& [n, t] : cell.named_buffers()) bnames.push_back(n), bvals.push_back(t.clone());
  std::vector<TensorTree> args;
  for (int i : diff) args.emplace_back(inputs[static_cast<size_t>(i)]);
  args.push_back(cell.parameter_tree());
  std::vector<int> argnums;
  for (size_t i = 0; i < args.size(); ++i) argnums.push_back(static_cast<int>(i));
  auto fn = [&](const std::vector<TensorTree>& a) {
    std::vector<Tensor> xs = inputs;
    for (size_t k = 0; k < diff.size(); ++k) xs[static_cast<size_t>(diff[k])] = a[k].tensor();
    return TensorTree(nn::functional_call(cell, a.back(), [&] { return fwd(xs); }));
  };
  auto r = autodiff::vjp("oracle nn", fn, args, argnums, false, false);
  const auto outs = r.out.leaves();
  Tensor ct = rand_tensor(outs[0].shape(), outs[0].dtype(), seed++);
  std::vector<Tensor> cts{ct};
  for (size_t i = 1; i < outs.size(); ++i) cts.push_back(ops::zeros_like(outs[i]));
  const auto grads = r.pullback(r.out.with_leaves(cts));
  std::vector<Tensor> results = outs;
  for (auto& [n, t] : cell.named_buffers()) results.push_back(t);
  for (size_t k = 0; k < diff.size(); ++k) results.push_back(grads[k].tensor());
  for (const Tensor& g : grads.back().leaves()) results.push_back(g);
  std::vector<Tensor> ins = inputs;
  ins.insert(ins.end(), pvals.begin(), pvals.end());
  ins.insert(ins.end(), bvals.begin(), bvals.end());
  ins.push_back(ct);
  w.add("nn_layer", ins, results,
        {{"module", module},
         {"kwargs", quoted(kwargs)},
         {"call", call},
         {"train", cell.is_training()},
         {"n_in", static_cast<int64_t>(inputs.size())},
         {"n_out", static_cast<int64_t>(outs.size())},
         {"params", join(pnames)},
         {"buffers", join(bnames)}},
        opt);
}

Tensor rnd(const Shape& s, DType dt, uint64_t& seed) { return rand_tensor(s, dt, seed++); }

void unary(Writer& w, uint64_t& seed, const std::string& module, const std::string& kwargs, nn::UnaryCell& cell,
           const Tensor& x, CaseOptions opt = {}) {
  add_layer(w, seed, module, kwargs, "unary", cell, {x}, [&](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{cell(a[0])};
  }, opt);
}

void layer_cases(Writer& w, uint64_t& seed) {
  for (DType dt : {DType::Float64, DType::Float32}) {
    // Gradients sum many products: float32 gets a looser bound than a forward op.
    const CaseOptions opt = dt == DType::Float32 ? CaseOptions{.rtol = 1e-4, .atol = 1e-5} : CaseOptions{.rtol = 1e-9, .atol = 1e-11};
    auto conv = [&](nn::UnaryCell& c) { c.to(dt); };
    { nn::Dense c(5, 3); conv(c); unary(w, seed, "Linear", R"({"in_features": 5, "out_features": 3})", c, rnd({4, 5}, dt, seed), opt); }
    { nn::Dense c(5, 3, false); conv(c); unary(w, seed, "Linear", R"({"in_features": 5, "out_features": 3, "bias": false})", c, rnd({2, 3, 5}, dt, seed), opt); }
    { nn::Conv1d c(2, 4, 3, 2, 1); conv(c);
      unary(w, seed, "Conv1d", R"({"in_channels": 2, "out_channels": 4, "kernel_size": 3, "stride": 2, "padding": 1})", c, rnd({2, 2, 9}, dt, seed), opt); }
    { nn::Conv2d c(4, 6, {3, 2}, 1, {1, 0}, 2, 2); conv(c);
      unary(w, seed, "Conv2d", R"({"in_channels": 4, "out_channels": 6, "kernel_size": [3, 2], "padding": [1, 0], "dilation": 2, "groups": 2})", c, rnd({2, 4, 7, 6}, dt, seed), opt); }
    { nn::Conv2dTranspose c(3, 2, 3, 2, 1, 1); conv(c);
      unary(w, seed, "ConvTranspose2d", R"({"in_channels": 3, "out_channels": 2, "kernel_size": 3, "stride": 2, "padding": 1, "output_padding": 1})", c, rnd({2, 3, 4, 4}, dt, seed), opt); }
    { nn::MaxPool2d c(3, 2, 1); unary(w, seed, "MaxPool2d", R"({"kernel_size": 3, "stride": 2, "padding": 1})", c, rnd({2, 3, 7, 7}, dt, seed), opt); }
    { nn::AvgPool2d c(2, {}, 0, true); unary(w, seed, "AvgPool2d", R"({"kernel_size": 2, "ceil_mode": true})", c, rnd({2, 3, 5, 5}, dt, seed), opt); }
    { nn::AdaptiveAvgPool2d c({3, 2}); unary(w, seed, "AdaptiveAvgPool2d", R"({"output_size": [3, 2]})", c, rnd({2, 3, 7, 5}, dt, seed), opt); }
    for (bool train : {true, false}) {
      nn::BatchNorm2d c(3, 1e-5, 0.3);
      conv(c);
      ops::copy_(c.weight, rnd({3}, dt, seed));
      ops::copy_(c.bias, rnd({3}, dt, seed));
      ops::copy_(c.running_mean, rnd({3}, dt, seed));
      ops::copy_(c.running_var, rand_tensor({3}, dt, seed++, Fill::Positive));
      c.train(train);
      unary(w, seed, "BatchNorm2d", R"({"num_features": 3, "momentum": 0.3})", c, rnd({4, 3, 3, 2}, dt, seed), opt);
      nn::BatchNorm1d c1(4);
      conv(c1);
      c1.train(train);
      unary(w, seed, "BatchNorm1d", R"({"num_features": 4})", c1, rnd({5, 4, 3}, dt, seed), opt);
    }
    { nn::LayerNorm c(nn::IntList{3, 4}); conv(c); ops::copy_(c.weight, rnd({3, 4}, dt, seed)); ops::copy_(c.bias, rnd({3, 4}, dt, seed));
      unary(w, seed, "LayerNorm", R"({"normalized_shape": [3, 4]})", c, rnd({2, 3, 4}, dt, seed), opt); }
    { nn::GroupNorm c(2, 6); conv(c); ops::copy_(c.weight, rnd({6}, dt, seed));
      unary(w, seed, "GroupNorm", R"({"num_groups": 2, "num_channels": 6})", c, rnd({3, 6, 4}, dt, seed), opt); }
    { nn::RMSNorm c(6, 1e-6); conv(c); ops::copy_(c.weight, rnd({6}, dt, seed));
      unary(w, seed, "RMSNorm", R"({"normalized_shape": [6], "eps": 1e-6})", c, rnd({3, 6}, dt, seed), opt); }
    { nn::Embedding c(7, 3); conv(c);
      add_layer(w, seed, "Embedding", R"({"num_embeddings": 7, "embedding_dim": 3})", "unary", c, {rand_index({2, 5}, 7, seed++)},
                [&](const std::vector<Tensor>& a) { return std::vector<Tensor>{c(a[0])}; }, opt); }
    // padding_idx (negative, as torch allows): the row's value passes through, its gradient is zero.
    { nn::Embedding c(7, 3, -2); conv(c); ops::copy_(c.weight, rnd({7, 3}, dt, seed));
      add_layer(w, seed, "Embedding", R"({"num_embeddings": 7, "embedding_dim": 3, "padding_idx": -2})", "unary", c,
                {ops::from_vector<int64_t>({5, 1, 5, 0, 3, 2, 5, 6, 4, 5}, {2, 5})},
                [&](const std::vector<Tensor>& a) { return std::vector<Tensor>{c(a[0])}; }, opt); }
    for (const char* act : {"ReLU", "GELU", "Sigmoid", "Tanh", "SiLU", "LeakyReLU", "ELU", "Softplus", "Mish", "Hardswish"}) {
      std::unique_ptr<nn::UnaryCell> c;
      const std::string a = act;
      std::string kw = "{}";
      if (a == "ReLU") c = std::make_unique<nn::ReLU>();
      if (a == "GELU") c = std::make_unique<nn::GELU>(true), kw = R"({"approximate": "tanh"})";
      if (a == "Sigmoid") c = std::make_unique<nn::Sigmoid>();
      if (a == "Tanh") c = std::make_unique<nn::Tanh>();
      if (a == "SiLU") c = std::make_unique<nn::SiLU>();
      if (a == "LeakyReLU") c = std::make_unique<nn::LeakyReLU>(0.2), kw = R"({"negative_slope": 0.2})";
      if (a == "ELU") c = std::make_unique<nn::ELU>(0.7), kw = R"({"alpha": 0.7})";
      if (a == "Softplus") c = std::make_unique<nn::Softplus>(2.0, 5.0), kw = R"({"beta": 2.0, "threshold": 5.0})";
      if (a == "Mish") c = std::make_unique<nn::Mish>();
      if (a == "Hardswish") c = std::make_unique<nn::Hardswish>();
      unary(w, seed, act, kw, *c, rnd({3, 7}, dt, seed) * 3, opt);
    }
    { nn::Softmax c(1); unary(w, seed, "Softmax", R"({"dim": 1})", c, rnd({3, 4, 2}, dt, seed), opt); }
    { nn::LogSoftmax c(-1); unary(w, seed, "LogSoftmax", R"({"dim": -1})", c, rnd({3, 5}, dt, seed), opt); }

    // Attention with a key padding mask and a float attn_mask; batch_first and sequence-first.
    for (bool bf : {true, false}) {
      nn::MultiheadAttention c(8, 2, 0.0, true, bf);
      c.to(dt);
      ops::copy_(c.in_proj_bias, rnd({24}, dt, seed));
      const Tensor q = bf ? rnd({2, 3, 8}, dt, seed) : rnd({3, 2, 8}, dt, seed);
      const Tensor kv = bf ? rnd({2, 5, 8}, dt, seed) : rnd({5, 2, 8}, dt, seed);
      const Tensor kpm = ops::tensor({{false, false, false, true, true}, {false, true, false, false, false}});
      const Tensor am = rnd({3, 5}, dt, seed);
      const std::string kw = std::string(R"({"embed_dim": 8, "num_heads": 2, "batch_first": )") + (bf ? "true" : "false") + "}";
      add_layer(w, seed, "MultiheadAttention", kw, "mha", c, {q, kv, kv, am, kpm}, [&](const std::vector<Tensor>& a) {
        return std::vector<Tensor>{c(a[0], a[1], a[2], a[3], a[4])};
      }, opt);
    }
    // Transformer layers (dropout 0 so torch's and Spore's agree), post- and pre-norm, relu/gelu.
    for (bool norm_first : {false, true}) {
      nn::TransformerOptions o{.dim_feedforward = 12, .dropout = 0.0, .activation = norm_first ? nn::Activation::GELU : nn::Activation::ReLU,
                               .batch_first = true, .norm_first = norm_first};
      const std::string kw = std::string(R"({"d_model": 8, "nhead": 2, "dim_feedforward": 12, "dropout": 0.0, "batch_first": true, "activation": ")") +
                             (norm_first ? "gelu" : "relu") + R"(", "norm_first": )" + (norm_first ? "true" : "false") + "}";
      nn::TransformerEncoderLayer enc(8, 2, o);
      enc.to(dt);
      const Tensor src = rnd({2, 4, 8}, dt, seed);
      const Tensor causal = ops::logical_not(ops::tril(ops::ones({4, 4}, {DType::Bool})));
      add_layer(w, seed, "TransformerEncoderLayer", kw, "encoder", enc, {src, causal}, [&](const std::vector<Tensor>& a) {
        return std::vector<Tensor>{enc(a[0], a[1])};
      }, opt);
      nn::TransformerDecoderLayer dec(8, 2, o);
      dec.to(dt);
      const Tensor tgt = rnd({2, 4, 8}, dt, seed), mem = rnd({2, 6, 8}, dt, seed);
      const Tensor mkpm = ops::tensor({{false, false, false, false, true, true}, {false, false, false, false, false, false}});
      add_layer(w, seed, "TransformerDecoderLayer", kw, "decoder", dec, {tgt, mem, causal, mkpm}, [&](const std::vector<Tensor>& a) {
        return std::vector<Tensor>{dec(a[0], a[1], a[2], {}, {}, a[3])};
      }, opt);
    }
    // Recurrent layers: outputs, final states and gradients.
    for (int variant = 0; variant < 2; ++variant) {
      const bool bf = variant == 1, bi = variant == 1;
      const int64_t layers = variant == 1 ? 2 : 1;
      nn::RNNOptions ro{.num_layers = layers, .batch_first = bf, .bidirectional = bi};
      const std::string kw = R"({"input_size": 3, "hidden_size": 4, "num_layers": )" + std::to_string(layers) + R"(, "batch_first": )" +
                             (bf ? "true" : "false") + R"(, "bidirectional": )" + (bi ? "true" : "false") + "}";
      const Tensor x = rnd({2, 5, 3}, dt, seed);
      const int64_t dirs = bi ? 2 : 1;
      const Tensor h0 = rnd({layers * dirs, bf ? 2 : 5, 4}, dt, seed), c0 = rnd({layers * dirs, bf ? 2 : 5, 4}, dt, seed);
      nn::LSTM lstm(3, 4, ro);
      lstm.to(dt);
      add_layer(w, seed, "LSTM", kw, "lstm", lstm, {x, h0, c0}, [&](const std::vector<Tensor>& a) {
        auto r = lstm(a[0], a[1], a[2]);
        return std::vector<Tensor>{r.output, r.h_n, r.c_n};
      }, opt);
      nn::GRU gru(3, 4, ro);
      gru.to(dt);
      add_layer(w, seed, "GRU", kw, "gru", gru, {x, h0}, [&](const std::vector<Tensor>& a) {
        auto r = gru(a[0], a[1]);
        return std::vector<Tensor>{r.output, r.h_n};
      }, opt);
      // Padded batches: seq_length against torch's packed sequences (enforce_sorted=False).
      // The second LSTM case and the GRU case put the final states first, so the gradient flows from them.
      const Tensor xp = bf ? rnd({3, 5, 3}, dt, seed) : rnd({5, 3, 3}, dt, seed);
      const Tensor lengths = ops::from_vector<int64_t>({5, 2, 4}, {3});
      const Tensor hp = rnd({layers * dirs, 3, 4}, dt, seed), cp = rnd({layers * dirs, 3, 4}, dt, seed);
      add_layer(w, seed, "LSTM", kw, "lstm_packed", lstm, {xp, hp, cp, lengths}, [&](const std::vector<Tensor>& a) {
        auto r = lstm(a[0], a[1], a[2], a[3]);
        return std::vector<Tensor>{r.output, r.h_n, r.c_n};
      }, opt);
      add_layer(w, seed, "LSTM", kw, "lstm_packed_state", lstm, {xp, hp, cp, lengths}, [&](const std::vector<Tensor>& a) {
        auto r = lstm(a[0], a[1], a[2], a[3]);
        return std::vector<Tensor>{r.h_n + r.c_n, r.output};  // the gradient flows from both final states
      }, opt);
      add_layer(w, seed, "GRU", kw, "gru_packed", gru, {xp, hp, lengths}, [&](const std::vector<Tensor>& a) {
        auto r = gru(a[0], a[1], a[2]);
        return std::vector<Tensor>{r.h_n, r.output};
      }, opt);
    }
  }
}

// Losses: the value and the gradient with respect to the input.
void add_loss(Writer& w, uint64_t& seed, const std::string& fn, const std::string& kwargs, const std::vector<Tensor>& ins,
              const std::function<Tensor(const Tensor&)>& f, CaseOptions opt) {
  auto [value, g] = value_and_grad([&](const Tensor& x) {
    const Tensor l = f(x);
    return l.dim() == 0 ? l : ops::sum(l * ops::stop_gradient(ops::ones_like(l)));
  })(ins[0]);
  const Tensor l = f(ins[0]);
  w.add("nn_loss", ins, {l, g}, {{"fn", fn}, {"kwargs", quoted(kwargs)}}, opt);
}

void loss_cases(Writer& w, uint64_t& seed) {
  using nn::Reduction;
  const std::vector<std::pair<Reduction, std::string>> reds = {
      {Reduction::None, "none"}, {Reduction::Mean, "mean"}, {Reduction::Sum, "sum"}};
  for (DType dt : {DType::Float64, DType::Float32}) {
    const CaseOptions opt = dt == DType::Float32 ? CaseOptions{.rtol = 1e-4, .atol = 1e-5} : CaseOptions{.rtol = 1e-9, .atol = 1e-11};
    for (const auto& [r, rs] : reds) {
      const std::string red = R"({"reduction": ")" + rs + "\"";
      const Tensor x = rnd({4, 5}, dt, seed) * 3, y = rnd({4, 5}, dt, seed) * 3;
      add_loss(w, seed, "mse_loss", red + "}", {x, y}, [&](const Tensor& a) { return nn::mse_loss(a, y, r); }, opt);
      add_loss(w, seed, "l1_loss", red + "}", {x, y}, [&](const Tensor& a) { return nn::l1_loss(a, y, r); }, opt);
      add_loss(w, seed, "smooth_l1_loss", red + R"(, "beta": 0.7})", {x, y}, [&](const Tensor& a) { return nn::smooth_l1_loss(a, y, r, 0.7); }, opt);
      add_loss(w, seed, "huber_loss", red + R"(, "delta": 1.5})", {x, y}, [&](const Tensor& a) { return nn::huber_loss(a, y, r, 1.5); }, opt);
      // Class indices with weights, ignore_index and label smoothing; class probabilities.
      const Tensor logits = rnd({6, 4, 3}, dt, seed) * 2;
      const Tensor target = rand_index({6, 3}, 4, seed++);
      const Tensor cw = rand_tensor({4}, dt, seed++, Fill::Positive);
      add_loss(w, seed, "cross_entropy", red + R"(, "ignore_index": 2, "label_smoothing": 0.1})", {logits, target, cw},
               [&](const Tensor& a) { return nn::cross_entropy(a, target, cw, 2, r, 0.1); }, opt);
      const Tensor probs = ops::softmax(rnd({6, 4, 3}, dt, seed), 1);
      add_loss(w, seed, "cross_entropy", red + R"(, "label_smoothing": 0.2})", {logits, probs, Tensor()},
               [&](const Tensor& a) { return nn::cross_entropy(a, probs, {}, -100, r, 0.2); }, opt);
      const Tensor lp = ops::log_softmax(logits, 1);
      add_loss(w, seed, "nll_loss", red + R"(, "ignore_index": 1})", {lp, target, cw},
               [&](const Tensor& a) { return nn::nll_loss(a, target, cw, 1, r); }, opt);
      // BCE on probabilities (some exactly 0 and 1 targets), BCE with logits including large logits.
      const Tensor p = ops::sigmoid(rnd({3, 4}, dt, seed) * 2), t = ops::where(rnd({3, 4}, dt, seed) > 0.0, ops::ones({3, 4}, {dt}), ops::zeros({3, 4}, {dt}));
      const Tensor bw = rand_tensor({4}, dt, seed++, Fill::Positive);
      add_loss(w, seed, "binary_cross_entropy", red + "}", {p, t, bw}, [&](const Tensor& a) { return nn::binary_cross_entropy(a, t, bw, r); }, opt);
      const Tensor z = rnd({3, 4}, dt, seed) * 30;  // |z| up to ~100: the naive formula overflows
      const Tensor soft = ops::sigmoid(rnd({3, 4}, dt, seed));
      const Tensor pw = rand_tensor({4}, dt, seed++, Fill::Positive);
      add_loss(w, seed, "binary_cross_entropy_with_logits", red + "}", {z, soft, bw, pw},
               [&](const Tensor& a) { return nn::binary_cross_entropy_with_logits(a, soft, bw, pw, r); }, opt);
      add_loss(w, seed, "binary_cross_entropy_with_logits", red + "}", {z, t, Tensor(), Tensor()},
               [&](const Tensor& a) { return nn::binary_cross_entropy_with_logits(a, t, {}, {}, r); }, opt);
      // KL divergence with probability targets (some zeros) and log targets.
      const Tensor inp = ops::log_softmax(rnd({3, 5}, dt, seed), 1);
      Tensor tp = ops::softmax(rnd({3, 5}, dt, seed) * 2, 1);
      tp = ops::where(tp < 0.05, ops::zeros_like(tp), tp);
      add_loss(w, seed, "kl_div", red + "}", {inp, tp}, [&](const Tensor& a) { return nn::kl_div(a, tp, r); }, opt);
      const Tensor lt = ops::log_softmax(rnd({3, 5}, dt, seed), 1);
      add_loss(w, seed, "kl_div", red + R"(, "log_target": true})", {inp, lt}, [&](const Tensor& a) { return nn::kl_div(a, lt, r, true); }, opt);
    }
    const Tensor inp = ops::log_softmax(rnd({3, 5}, dt, seed), 1), tp = ops::softmax(rnd({3, 5}, dt, seed), 1);
    add_loss(w, seed, "kl_div", R"({"reduction": "batchmean"})", {inp, tp},
             [&](const Tensor& a) { return nn::kl_div(a, tp, Reduction::BatchMean); }, opt);
  }
}

}  // namespace

SPORE_ORACLE_FAMILY(nn_layers) {
  uint64_t seed = 9100;
  manual_seed(42);
  layer_cases(w, seed);
  loss_cases(w, seed);
}

}  // namespace spore::oracle
