// SPDX-License-Identifier: Apache-2.0
// ONNX RNN, GRU and LSTM (default activations) as a scan over the sequence per direction: the
// input projection X W^T + Wb is one matmul over every step, the recurrence runs in the scan
// body. Gate orders are ONNX's (GRU z, r, h; LSTM i, o, f, c; peepholes i, o, f).
#include "io/onnx/op_context.h"
#include "spore/control_flow.h"
#include "spore/ops.h"

namespace spore::io::onnx_detail {

namespace {

using Ts = std::vector<Tensor>;
namespace o = spore::ops;

enum Kind { kRnn = 0, kGru = 1, kLstm = 2 };

Tensor part(const Tensor& t, int64_t k, int64_t h) { return o::slice(t, -1, k * h, (k + 1) * h); }
Tensor lin(const Tensor& h, const Tensor& r) { return o::matmul(h, o::transpose(r, 0, 1)); }

template <int K>
Ts rnn_op(const OpContext& c) {
  constexpr int64_t gates = K == kRnn ? 1 : K == kGru ? 3 : 4;
  const int64_t hs = c.i("hidden_size", -1);
  if (hs < 1) c.fail("hidden_size is required");
  if (c.attr("activations") || c.attr("clip") || c.attr("activation_alpha") || c.attr("activation_beta"))
    c.fail("only the default activations without clip are supported");
  if (K == kLstm && c.i("input_forget", 0)) c.fail("input_forget is not supported");
  const std::string dir = c.s("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional") c.fail("unknown direction '" + dir + "'");
  const int64_t nd = dir == "bidirectional" ? 2 : 1;
  const bool batch_first = c.i("layout", 0) != 0;
  Tensor x = c.in(0);
  if (x.dim() != 3) c.fail("X must be 3-D, got " + shape_str(x.shape()));
  if (batch_first) x = o::transpose(x, 0, 1);  // (seq, batch, input)
  const Dim seq = x.shape()[0];
  if (c.has(4)) {
    for (int64_t len : c.ints_of(4))
      if (is_symbolic(seq) || len != seq) c.fail("sequence_lens shorter than the sequence are not supported");
  }
  const Tensor& w = c.in(1);
  const Tensor& r = c.in(2);
  auto initial = [&](size_t i) -> Tensor {
    if (!c.has(i)) return {};
    return batch_first ? o::transpose(c.in(i), 0, 1) : c.in(i);  // (dirs, batch, hidden)
  };
  const Tensor h0 = initial(5), c0 = K == kLstm ? initial(6) : Tensor{};
  const bool lbr = K == kGru && c.i("linear_before_reset", 0) != 0;
  Ts ys, hs_out, cs_out;
  for (int64_t d = 0; d < nd; ++d) {
    const bool rev = dir == "reverse" || d == 1;
    const Tensor wd = o::select(w, 0, d), rd = o::select(r, 0, d);
    Tensor wb, rb;
    if (c.has(3)) {
      const Tensor bd = o::select(c.in(3), 0, d);
      wb = o::slice(bd, 0, 0, gates * hs);
      rb = o::slice(bd, 0, gates * hs, 2 * gates * hs);
    }
    Tensor xs = rev ? o::flip(x, {0}) : x;
    Tensor xw = lin(xs, wd);
    if (wb.defined()) xw = o::add(xw, wb);
    const Dim batch = x.shape()[1];
    Tensor h = h0.defined() ? o::select(h0, 0, d) : o::zeros(Shape{batch, hs}, {x.dtype()});
    Tensor cell = c0.defined() ? o::select(c0, 0, d) : o::zeros(Shape{batch, hs}, {x.dtype()});
    Tensor p = K == kLstm && c.has(7) ? o::select(c.in(7), 0, d) : Tensor{};
    auto rec = [&](const Tensor& hh, int64_t k) {  // hh R_k^T + Rb_k
      Tensor v = lin(hh, o::slice(rd, 0, k * hs, (k + 1) * hs));
      return rb.defined() ? o::add(v, part(rb, k, hs)) : v;
    };
    auto step = [&](const TensorTree& carry, const TensorTree& xt_tree) {
      const Tensor& xt = xt_tree.tensor();
      Tensor hp = carry[0].tensor();
      if (K == kRnn) {
        Tensor hn = o::tanh(o::add(xt, rec(hp, 0)));
        return std::pair<TensorTree, TensorTree>(TensorTree{TensorTree(hn)}, TensorTree(hn));
      }
      if (K == kGru) {
        Tensor z = o::sigmoid(o::add(part(xt, 0, hs), rec(hp, 0)));
        Tensor rr = o::sigmoid(o::add(part(xt, 1, hs), rec(hp, 1)));
        Tensor cand = lbr ? o::tanh(o::add(part(xt, 2, hs), o::mul(rr, rec(hp, 2))))
                          : o::tanh(o::add(part(xt, 2, hs), rec(o::mul(rr, hp), 2)));
        Tensor hn = o::add(o::mul(o::sub(o::ones_like(z), z), cand), o::mul(z, hp));
        return std::pair<TensorTree, TensorTree>(TensorTree{TensorTree(hn)}, TensorTree(hn));
      }
      Tensor cp = carry[1].tensor();
      auto gate = [&](int64_t k) { return o::add(part(xt, k, hs), rec(hp, k)); };
      Tensor gi = gate(0), go = gate(1), gf = gate(2), gc = gate(3);
      if (p.defined()) {
        gi = o::add(gi, o::mul(part(p, 0, hs), cp));
        gf = o::add(gf, o::mul(part(p, 2, hs), cp));
      }
      Tensor cn = o::add(o::mul(o::sigmoid(gf), cp), o::mul(o::sigmoid(gi), o::tanh(gc)));
      if (p.defined()) go = o::add(go, o::mul(part(p, 1, hs), cn));
      Tensor hn = o::mul(o::sigmoid(go), o::tanh(cn));
      return std::pair<TensorTree, TensorTree>(TensorTree{TensorTree(hn), TensorTree(cn)}, TensorTree(hn));
    };
    TensorTree init = K == kLstm ? TensorTree{TensorTree(h), TensorTree(cell)} : TensorTree{TensorTree(h)};
    auto [fin, y] = scan(step, init, TensorTree(xw));
    Tensor yd = y.tensor();
    if (rev) yd = o::flip(yd, {0});
    ys.push_back(yd);
    hs_out.push_back(fin[0].tensor());
    if (K == kLstm) cs_out.push_back(fin[1].tensor());
  }
  Tensor y_all = o::stack(ys, 1);      // (seq, dirs, batch, hidden)
  Tensor h_all = o::stack(hs_out, 0);  // (dirs, batch, hidden)
  Tensor c_all = K == kLstm ? o::stack(cs_out, 0) : Tensor{};
  if (batch_first) {
    y_all = o::permute(y_all, {2, 0, 1, 3});
    h_all = o::transpose(h_all, 0, 1);
    if (c_all.defined()) c_all = o::transpose(c_all, 0, 1);
  }
  Ts out{y_all, h_all};
  if (K == kLstm) out.push_back(c_all);
  return out;
}

}  // namespace

void add_rnn_ops(OpTable& t) {
  const OpTable rows = {
      {"RNN", 7, 17, rnn_op<kRnn>},
      {"GRU", 7, 17, rnn_op<kGru>},
      {"LSTM", 7, 17, rnn_op<kLstm>},
  };
  t.insert(t.end(), rows.begin(), rows.end());
}

}  // namespace spore::io::onnx_detail
