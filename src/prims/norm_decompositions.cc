// SPDX-License-Identifier: Apache-2.0
// Decompositions of softmax, log_softmax and the norms into public ops (see the header).
#include "prims/norm_decompositions.h"

#include "ops/promote.h"
#include "prims/batch_norm.h"
#include "prims/batch_norm_grad.h"
#include "prims/group_norm.h"
#include "prims/layer_norm.h"
#include "prims/rms_norm.h"
#include "prims/softmax.h"
#include "spore/ops/elementwise.h"
#include "spore/ops/reduction.h"
#include "spore/ops/shape.h"

namespace spore::prims {
namespace {

using namespace spore::ops;

Axes trailing(int64_t from, int64_t rank) {
  Axes a;
  for (int64_t i = from; i < rank; ++i) a.push_back(i);
  return a;
}

// x widened to the statistics dtype (16-bit floats compute in float32).
Tensor widen(const Tensor& x) { return to_dtype(x, stats_dtype(x.dtype())); }

// Shape with the leading `keep` dims of s and ones after (for broadcasting statistics).
Shape keep_leading(const Shape& s, size_t keep) {
  Shape r(s.begin(), s.begin() + keep);
  return r;
}

// (x - mean) * rstd over `axes`, returning (y, mean, rstd) with keepdims statistics.
std::array<Tensor, 3> standardize(const Tensor& xf, const Axes& axes, double eps) {
  Tensor mu = mean(xf, axes, true);
  Tensor d = xf - mu;
  Tensor rstd = rsqrt(mean(square(d), axes, true) + eps);
  return {d * rstd, mu, rstd};
}

}  // namespace

void decompose_softmax(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out) {
  const int64_t ax = static_cast<const SoftmaxAttrs*>(attrs)->axis;
  const Tensor x = widen(in[0]);
  const Axes axes = in[0].dim() == 0 ? Axes{} : Axes{ax};
  Tensor e = exp(x - amax(x, axes, true));
  out = {to_dtype(e / sum(e, axes, true), in[0].dtype())};
}

void decompose_log_softmax(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out) {
  const int64_t ax = static_cast<const SoftmaxAttrs*>(attrs)->axis;
  const Tensor x = widen(in[0]);
  const Axes axes = in[0].dim() == 0 ? Axes{} : Axes{ax};
  Tensor s = x - amax(x, axes, true);
  out = {to_dtype(s - log(sum(exp(s), axes, true)), in[0].dtype())};
}

void decompose_layer_norm(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out) {
  const auto& a = *static_cast<const LayerNormAttrs*>(attrs);
  const Tensor& x = in[0];
  auto [y, mu, rstd] = standardize(widen(x), trailing(a.axis, x.dim()), a.eps);
  int k = 1;
  if (a.has_weight) y = y * widen(in[k++]);
  if (a.has_bias) y = y + widen(in[k++]);
  const Shape stats = keep_leading(x.shape(), static_cast<size_t>(a.axis));
  out = {to_dtype(y, x.dtype()), reshape(mu, stats), reshape(rstd, stats)};
}

void decompose_rms_norm(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out) {
  const auto& a = *static_cast<const RmsNormAttrs*>(attrs);
  const Tensor& x = in[0];
  const Tensor xf = widen(x);
  Tensor rstd = rsqrt(mean(square(xf), trailing(a.axis, x.dim()), true) + a.eps);
  Tensor y = xf * rstd;
  if (a.has_weight) y = y * widen(in[1]);
  out = {to_dtype(y, x.dtype()), reshape(rstd, keep_leading(x.shape(), static_cast<size_t>(a.axis)))};
}

void decompose_group_norm(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out) {
  const auto& a = *static_cast<const GroupNormAttrs*>(attrs);
  const Tensor& x = in[0];
  const Dim N = x.shape()[0], C = x.shape()[1];
  auto [yg, mu, rstd] = standardize(reshape(widen(x), {N, a.groups, -1}), {2}, a.eps);
  Tensor y = reshape(yg, x.shape());
  Shape cshape(static_cast<size_t>(x.dim()), 1);  // (1, C, 1, ...) for per-channel parameters
  cshape[1] = C;
  int k = 1;
  if (a.has_weight) y = y * reshape(widen(in[k++]), cshape);
  if (a.has_bias) y = y + reshape(widen(in[k++]), cshape);
  out = {to_dtype(y, x.dtype()), reshape(mu, {N, a.groups}), reshape(rstd, {N, a.groups})};
}

void decompose_batch_norm(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out) {
  const auto& a = *static_cast<const BatchNormAttrs*>(attrs);
  const Tensor& x = in[0];
  const Tensor xf = widen(x);
  const Dim C = x.shape()[1];
  Shape cshape(static_cast<size_t>(x.dim()), 1);
  cshape[1] = C;
  int k = 1;
  const Tensor w = a.has_weight ? widen(in[k++]) : Tensor();
  const Tensor b = a.has_bias ? widen(in[k++]) : Tensor();
  Tensor mu, var;
  if (a.training) {
    Axes axes{0};
    for (int64_t i = 2; i < x.dim(); ++i) axes.push_back(i);
    mu = mean(xf, axes, false);
    var = mean(square(xf - reshape(mu, cshape)), axes, false);
  } else {
    mu = widen(in[k]);
    var = widen(in[k + 1]);
  }
  Tensor y = (xf - reshape(mu, cshape)) * reshape(rsqrt(var + a.eps), cshape);
  if (w.defined()) y = y * reshape(w, cshape);
  if (b.defined()) y = y + reshape(b, cshape);
  out = {to_dtype(y, x.dtype()), mu, var};
}

void decompose_batch_norm_grad(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out) {
  const auto& a = *static_cast<const BatchNormGradAttrs*>(attrs);
  const Tensor& x = in[1];
  const Tensor dy = widen(in[0]), xf = widen(x);
  Shape cshape(static_cast<size_t>(x.dim()), 1);
  cshape[1] = x.shape()[1];
  Axes axes{0};
  double n = static_cast<double>(x.shape()[0]);
  for (int64_t i = 2; i < x.dim(); ++i) axes.push_back(i), n *= static_cast<double>(x.shape()[i]);
  const Tensor rstd = reshape(rsqrt(in[3] + a.eps), cshape);
  const Tensor xhat = (xf - reshape(in[2], cshape)) * rstd;
  const Tensor db = sum(dy, axes), dw = sum(dy * xhat, axes);
  const Tensor k = a.has_weight ? rstd * reshape(widen(in[4]), cshape) : rstd;
  const Tensor dx = k * (dy - reshape(db, cshape) * (1.0 / n) - xhat * (reshape(dw, cshape) * (1.0 / n)));
  out = {to_dtype(dx, x.dtype()), dw, db};
}

}  // namespace spore::prims
