// SPDX-License-Identifier: Apache-2.0
#include "spore/nn/rnn.h"

#include <cmath>

#include "spore/control_flow.h"
#include "spore/nn/init.h"
#include "spore/ops.h"

namespace spore::nn {

RNNBase::RNNBase(const char* name, int64_t input_size, int64_t hidden_size, int64_t gates, RNNOptions o)
    : Cell(name), input_size_(input_size), hidden_size_(hidden_size), gates_(gates), o_(o) {
  SPORE_CHECK(input_size > 0 && hidden_size > 0 && o.num_layers > 0, "[", name,
              "] input_size, hidden_size and num_layers must be positive, got ", input_size, ", ", hidden_size, ", ",
              o.num_layers);
  SPORE_CHECK(o.dropout >= 0 && o.dropout < 1, "[", name, "] dropout must be in [0, 1), got ", o.dropout);
  const int64_t dirs = o.bidirectional ? 2 : 1, H = hidden_size;
  params_.resize(static_cast<size_t>(o.num_layers * dirs * 4));
  for (int64_t l = 0; l < o.num_layers; ++l)
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string sfx = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      const int64_t in = l == 0 ? input_size : H * dirs;
      Tensor* p = &params_[static_cast<size_t>((l * dirs + d) * 4)];
      p[0] = init::empty({gates * H, in});
      p[1] = init::empty({gates * H, H});
      register_parameter("weight_ih" + sfx, &p[0]);
      register_parameter("weight_hh" + sfx, &p[1]);
      if (o.bias) {
        p[2] = init::empty({gates * H});
        p[3] = init::empty({gates * H});
        register_parameter("bias_ih" + sfx, &p[2]);
        register_parameter("bias_hh" + sfx, &p[3]);
      }
    }
  reset_own();  // the constructor draws what reset_parameters() redraws, by the same code
}

void RNNBase::reset_own() {
  const double k = 1.0 / std::sqrt(static_cast<double>(hidden_size_));
  for (Tensor& p : params_)  // (layer, direction) major, then w_ih, w_hh, b_ih, b_hh
    if (p.defined()) init::uniform_(p, -k, k);
}

namespace {

// (T, N, 1) bool: step t of sequence n is inside its length. Positions come from a cumulative
// sum rather than arange(T), so a symbolic T or N traces too.
Tensor step_mask(const RNNBase& cell, const Tensor& x, const Tensor& seq_length) {
  const int64_t T = x.size(0), N = x.size(1);
  SPORE_CHECK(seq_length.dim() == 1 && seq_length.size(0) == N && !is_floating(seq_length.dtype()) &&
                  seq_length.dtype() != DType::Bool,
              "[", cell.type_name(), "] seq_length has shape ", shape_str(seq_length.shape()), " and dtype ",
              dtype_name(seq_length.dtype()), "; expected (", N, ",) integer lengths, one per sequence");
  const Tensor len = seq_length.to(DType::Int64);
  if (len.device().type != DeviceType::Meta && !is_symbolic(T)) {
    for (int64_t v : len.to_vector<int64_t>())
      SPORE_CHECK(v >= 0 && v <= T, "[", cell.type_name(), "] seq_length holds ", v, ", outside [0, ", T,
                  "] for sequences of ", T, " steps; pad the input to the longest length");
  }
  const Tensor pos = ops::cumsum(ops::ones_like(ops::select(x, -1, 0)).to(DType::Int64), 0) - 1;  // (T, N)
  return ops::less(pos, len.unsqueeze(0)).unsqueeze(-1);
}

}  // namespace

std::vector<Tensor> RNNBase::run(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& seq_length,
                                 bool lstm) {
  const int64_t dirs = o_.bidirectional ? 2 : 1, H = hidden_size_, N = x.size(1);
  const Shape state_shape{o_.num_layers * dirs, N, H};
  for (const Tensor* s : {&h0, &c0})
    SPORE_CHECK(!s->defined() || s->shape() == state_shape, "[", type_name(), "] initial state has shape ",
                shape_str(s->shape()), "; expected ", shape_str(state_shape), " (layers * directions, batch, hidden)");
  const Tensor zeros = ops::zeros({N, H}, {x.dtype()});
  const Tensor mask = seq_length.defined() ? step_mask(*this, x, seq_length) : Tensor();
  const Tensor zero = mask.defined() ? ops::scalar_tensor(0, x.dtype()) : Tensor();
  // Padding is never read, as in a packed sequence: not even an inf in it reaches a gradient
  // (the input projection covers every step; later layers see zeros past each length).
  Tensor layer_in = mask.defined() ? ops::where(mask, x, zero) : x;
  std::vector<Tensor> hs, cs;
  for (int64_t l = 0; l < o_.num_layers; ++l) {
    std::vector<Tensor> outs;
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t idx = l * dirs + d;
      const Tensor* p = &params_[static_cast<size_t>(idx * 4)];
      const Tensor w_hh_t = p[1].transpose(0, 1), b_hh = p[3];
      // The input projection of every step at once, outside the loop.
      Tensor gi = ops::matmul(layer_in, p[0].transpose(0, 1));
      if (p[2].defined()) gi = gi + p[2];
      const Tensor h_init = h0.defined() ? ops::select(h0, 0, idx) : zeros;
      const Tensor c_init = c0.defined() ? ops::select(c0, 0, idx) : zeros;
      const int64_t G = gates_;
      const bool masked = mask.defined();
      auto step = [&, G, masked](const TensorTree& carry, const TensorTree& xs) {
        const Tensor h = lstm ? carry[0].tensor() : carry.tensor();
        const Tensor xt = masked ? xs[0].tensor() : xs.tensor();
        Tensor gh = ops::matmul(h, w_hh_t);
        if (b_hh.defined()) gh = gh + b_hh;
        Tensor hn, cn;
        if (lstm) {
          const auto g = ops::chunk(xt + gh, G, -1);
          cn = ops::sigmoid(g[1]) * carry[1].tensor() + ops::sigmoid(g[0]) * ops::tanh(g[2]);
          hn = ops::sigmoid(g[3]) * ops::tanh(cn);
        } else {
          const auto a = ops::chunk(xt, G, -1), b = ops::chunk(gh, G, -1);
          const Tensor r = ops::sigmoid(a[0] + b[0]), z = ops::sigmoid(a[1] + b[1]);
          const Tensor n = ops::tanh(a[2] + r * b[2]);
          hn = (1.0 - z) * n + z * h;
        }
        Tensor y = hn;
        if (masked) {  // past a sequence's end: the state stays, the output is zero
          const Tensor m = xs[1].tensor();
          y = ops::where(m, hn, zero);
          hn = ops::where(m, hn, h);
          if (lstm) cn = ops::where(m, cn, carry[1].tensor());
        }
        if (lstm) return std::make_pair(TensorTree{TensorTree(hn), TensorTree(cn)}, TensorTree(y));
        return std::make_pair(TensorTree(hn), TensorTree(y));
      };
      const TensorTree init = lstm ? TensorTree{TensorTree(h_init), TensorTree(c_init)} : TensorTree(h_init);
      const TensorTree xs = masked ? TensorTree{TensorTree(gi), TensorTree(mask)} : TensorTree(gi);
      auto [carry, ys] = scan(step, init, xs, /*reverse=*/d == 1);
      outs.push_back(ys.tensor());
      hs.push_back(lstm ? carry[0].tensor() : carry.tensor());
      if (lstm) cs.push_back(carry[1].tensor());
    }
    layer_in = dirs == 1 ? outs[0] : ops::concat(outs, -1);
    if (l + 1 < o_.num_layers && is_training() && o_.dropout > 0) layer_in = ops::dropout(layer_in, o_.dropout, true);
  }
  std::vector<Tensor> r{layer_in, ops::stack(hs, 0)};
  if (lstm) r.push_back(ops::stack(cs, 0));
  return r;
}

namespace {

// Time-major, batched view of the input; `undo` maps outputs back.
struct Layout {
  Tensor x;
  bool unbatched;
  bool batch_first;
};

Layout to_time_major(const RNNBase& cell, const Tensor& x) {
  SPORE_CHECK(x.defined() && (x.dim() == 2 || x.dim() == 3) && x.size(-1) == cell.input_size(), "[", cell.type_name(),
              "] input has shape ", x.defined() ? shape_str(x.shape()) : "(undefined)", "; expected (T, N, ",
              cell.input_size(), "), (N, T, ", cell.input_size(), ") with batch_first, or unbatched (T, ",
              cell.input_size(), ")");
  SPORE_CHECK(is_floating(x.dtype()), "[", cell.type_name(), "] input must be floating, got ", dtype_name(x.dtype()));
  if (x.dim() == 2) return {x.unsqueeze(1), true, false};
  return {cell.options().batch_first ? x.transpose(0, 1) : x, false, cell.options().batch_first};
}

Tensor state_in(const Tensor& s, bool unbatched) { return s.defined() && unbatched ? s.unsqueeze(1) : s; }
// An unbatched input has one length, a 0-d tensor.
Tensor lengths_in(const RNNBase& cell, const Tensor& seq_length, bool unbatched) {
  if (!seq_length.defined() || !unbatched) return seq_length;
  SPORE_CHECK(seq_length.dim() == 0 && !is_floating(seq_length.dtype()) && seq_length.dtype() != DType::Bool, "[",
              cell.type_name(), "] seq_length for an unbatched input is one 0-d integer length, got ",
              dtype_name(seq_length.dtype()), " of shape ", shape_str(seq_length.shape()));
  return seq_length.unsqueeze(0);
}
Tensor state_out(const Tensor& s, bool unbatched) { return unbatched ? s.squeeze(1) : s; }
Tensor output_out(const Tensor& y, const Layout& l) {
  return l.unbatched ? y.squeeze(1) : l.batch_first ? y.transpose(0, 1) : y;
}

}  // namespace

LSTM::LSTM(int64_t input_size, int64_t hidden_size, RNNOptions o) : RNNBase("LSTM", input_size, hidden_size, 4, o) {}

LSTM::Output LSTM::operator()(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& seq_length) {
  const Layout l = to_time_major(*this, x);
  auto r = run(l.x, state_in(h0, l.unbatched), state_in(c0, l.unbatched), lengths_in(*this, seq_length, l.unbatched),
               true);
  return {output_out(r[0], l), state_out(r[1], l.unbatched), state_out(r[2], l.unbatched)};
}

GRU::GRU(int64_t input_size, int64_t hidden_size, RNNOptions o) : RNNBase("GRU", input_size, hidden_size, 3, o) {}

GRU::Output GRU::operator()(const Tensor& x, const Tensor& h0, const Tensor& seq_length) {
  const Layout l = to_time_major(*this, x);
  auto r = run(l.x, state_in(h0, l.unbatched), Tensor(), lengths_in(*this, seq_length, l.unbatched), false);
  return {output_out(r[0], l), state_out(r[1], l.unbatched)};
}

}  // namespace spore::nn
