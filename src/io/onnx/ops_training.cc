// SPDX-License-Identifier: Apache-2.0
// The ai.onnx.preview.training optimizers (Adagrad, Momentum, Adam): one update step of each
// (X, G, state...) group, elementwise, as ONNX's reference writes them. The step count T must be
// known at import time (it selects the bias corrections); the rate R may be a run-time value.
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

int64_t step_of(const OpContext& c) {
  const auto t = c.ints_of(1);
  if (t.size() != 1) c.fail("T must hold one value");
  return t[0];
}

Tensor regularized(const Tensor& x, const Tensor& g, double norm) {
  return norm == 0 ? g : o::add(o::mul(x, lit(norm)), g);
}

Ts adagrad_op(const OpContext& c) {
  const size_t n = groups_of(c, 3);
  const int64_t t = step_of(c);
  const double decay = c.f("decay_factor", 0.0), eps = c.f("epsilon", 1e-6), norm = c.f("norm_coefficient", 0.0);
  const Tensor r = o::div(c.in(0), lit(1 + static_cast<double>(t) * decay));
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
  const int64_t t = step_of(c);
  const double alpha = c.f("alpha", 0.0), beta = c.f("beta", 0.0), norm = c.f("norm_coefficient", 0.0);
  const std::string mode = c.s("mode", "standard");
  if (mode != "standard" && mode != "nesterov") c.fail("mode '" + mode + "' is not standard or nesterov");
  const double b = t > 0 ? beta : 1.0;
  Ts xs, vs;
  for (size_t k = 0; k < n; ++k) {
    const Tensor &x = c.in(2 + k), &g = c.in(2 + n + k), &v = c.in(2 + 2 * n + k);
    Tensor gr = regularized(x, g, norm);
    Tensor vn = o::add(o::mul(v, lit(alpha)), o::mul(gr, lit(b)));
    Tensor step = mode == "standard" ? vn : o::add(gr, o::mul(vn, lit(alpha)));
    xs.push_back(o::sub(x, o::mul(c.in(0), step)));
    vs.push_back(vn);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  return xs;
}

Ts adam_op(const OpContext& c) {
  const size_t n = groups_of(c, 4);
  const int64_t t = step_of(c);
  const double alpha = c.f("alpha", 0.9), beta = c.f("beta", 0.999), eps = c.f("epsilon", 1e-6);
  const double norm = c.f("norm_coefficient", 0.0), post = c.f("norm_coefficient_post", 0.0);
  const double td = static_cast<double>(t);
  const Tensor r = t > 0 ? o::mul(c.in(0), lit(std::sqrt(1 - std::pow(beta, td)) / (1 - std::pow(alpha, td)))) : c.in(0);
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
