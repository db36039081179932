// SPDX-License-Identifier: Apache-2.0
// The ai.onnx.preview.training optimizers (Adagrad, Momentum, Adam): one update step of each
// (X, G, state...) group, elementwise, as ONNX's reference writes them. The rate R and the step
// count T may be run-time values: T's bias corrections are tensor ops (folded when T is known).
#include <cmath>

#include "io/onnx/op_context.h"
#include "spore/ops.h"

namespace spore::io::onnx_detail {

namespace {

using Ts = std::vector<Tensor>;
namespace o = spore::ops;
Tensor lit(double v) { return o::weak_scalar(v); }

// The number of (X, G, state...) groups: inputs are R, T, then X..., G..., each state....
size_t groups_of(const OpContext& c, size_t per_group) {
  const size_t n = c.num_inputs();
  if (n < 2 + per_group || (n - 2) % per_group != 0)
    c.fail("takes R, T and groups of " + std::to_string(per_group) + " tensors, got " + std::to_string(n) + " inputs");
  return (n - 2) / per_group;
}

// T as a float64 0-d tensor (folded at import when T is known there).
Tensor step_of(const OpContext& c) {
  const Tensor& t = c.in(1);
  if (t.numel() != 1 || !is_integral(t.dtype())) c.fail("T must hold one integer, got " + std::string(dtype_name(t.dtype())) + shape_str(t.shape()));
  return o::cast(o::reshape(t, Shape{}), DType::Float64);
}

// A factor computed in float64, in the rate's dtype (so the update keeps the tensors' dtype).
Tensor like_rate(const OpContext& c, const Tensor& f) { return o::cast(f, c.in(0).dtype()); }

Tensor regularized(const Tensor& x, const Tensor& g, double norm) {
  return norm == 0 ? g : o::add(o::mul(x, lit(norm)), g);
}

Ts adagrad_op(const OpContext& c) {
  const size_t n = groups_of(c, 3);
  const Tensor t = step_of(c);
  const double decay = c.f("decay_factor", 0.0), eps = c.f("epsilon", 1e-6), norm = c.f("norm_coefficient", 0.0);
  const Tensor r = o::div(c.in(0), like_rate(c, t * decay + 1.0));
  Ts xs, hs;
  for (size_t k = 0; k < n; ++k) {
    const Tensor &x = c.in(2 + k), &g = c.in(2 + n + k), &h = c.in(2 + 2 * n + k);
    Tensor gr = regularized(x, g, norm);
    Tensor hn = o::add(h, o::mul(gr, gr));
    xs.push_back(o::sub(x, o::div(o::mul(r, gr), o::add(o::sqrt(hn), lit(eps)))));
    hs.push_back(hn);
  }
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

Ts momentum_op(const OpContext& c) {
  const size_t n = groups_of(c, 3);
  const Tensor t = step_of(c);
  const double alpha = c.f("alpha", 0.0), beta = c.f("beta", 0.0), norm = c.f("norm_coefficient", 0.0);
  const std::string mode = c.s("mode", "standard");
  if (mode != "standard" && mode != "nesterov") c.fail("mode '" + mode + "' is not standard or nesterov");
  // The first step (T = 0) takes the whole gradient.
  const Tensor b = like_rate(c, o::where(o::greater(t, o::zeros_like(t)), o::full_like(t, beta), o::ones_like(t)));
  Ts xs, vs;
  for (size_t k = 0; k < n; ++k) {
    const Tensor &x = c.in(2 + k), &g = c.in(2 + n + k), &v = c.in(2 + 2 * n + k);
    Tensor gr = regularized(x, g, norm);
    Tensor vn = o::add(o::mul(v, lit(alpha)), o::mul(gr, b));
    Tensor step = mode == "standard" ? vn : o::add(gr, o::mul(vn, lit(alpha)));
    xs.push_back(o::sub(x, o::mul(c.in(0), step)));
    vs.push_back(vn);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  return xs;
}

Ts adam_op(const OpContext& c) {
  const size_t n = groups_of(c, 4);
  const Tensor t = step_of(c);
  const double alpha = c.f("alpha", 0.9), beta = c.f("beta", 0.999), eps = c.f("epsilon", 1e-6);
  const double norm = c.f("norm_coefficient", 0.0), post = c.f("norm_coefficient_post", 0.0);
  // Bias corrections from step 1 on: sqrt(1 - beta^T) / (1 - alpha^T).
  auto power = [&t](double base) { return o::pow(o::full_like(t, base), t); };
  const Tensor corr = o::div(o::sqrt(o::sub(o::ones_like(t), power(beta))), o::sub(o::ones_like(t), power(alpha)));
  const Tensor r = o::mul(c.in(0), like_rate(c, o::where(o::greater(t, o::zeros_like(t)), corr, o::ones_like(t))));
  Ts xs, vs, hs;
  for (size_t k = 0; k < n; ++k) {
    const Tensor &x = c.in(2 + k), &g = c.in(2 + n + k), &v = c.in(2 + 2 * n + k), &h = c.in(2 + 3 * n + k);
    Tensor gr = regularized(x, g, norm);
    Tensor vn = o::add(o::mul(v, lit(alpha)), o::mul(gr, lit(1 - alpha)));
    Tensor hn = o::add(o::mul(h, lit(beta)), o::mul(o::mul(gr, gr), lit(1 - beta)));
    Tensor xn = o::sub(x, o::mul(r, o::div(vn, o::add(o::sqrt(hn), lit(eps)))));
    xs.push_back(post == 0 ? xn : o::mul(xn, lit(1 - post)));
    vs.push_back(vn);
    hs.push_back(hn);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

}  // namespace

void add_training_ops(OpTable& t) {
  const OpTable rows = {
      {"Adagrad", 1, 17, adagrad_op},
      {"Momentum", 1, 17, momentum_op},
      {"Adam", 1, 17, adam_op},
  };
  t.insert(t.end(), rows.begin(), rows.end());
}

}  // namespace spore::io::onnx_detail
