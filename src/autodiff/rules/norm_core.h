// SPDX-License-Identifier: Apache-2.0
#pragma once
// The standardization step shared by the norm rules (norm.cc, batch_norm.cc):
// xhat = (x - mean) * rstd over `axes`, with rstd = 1 / sqrt(var + eps). Inputs are already in
// the statistics dtype and broadcast against each other (statistics kept as size-1 axes).
#include <vector>

#include "autodiff/rules/nn_parts.h"

namespace spore::autodiff::norm {

/// Mean over `axes`, keeping them as size 1; the identity over no axes (ops::mean would
/// reduce everything).
inline Tensor mean_over(const Tensor& t, const ops::Axes& axes) { return axes.empty() ? t : ops::mean(t, axes, true); }
/// Sum over `axes` (not kept); the identity over no axes.
inline Tensor sum_over(const Tensor& t, const ops::Axes& axes) { return axes.empty() ? t : ops::sum(t, axes); }

/// Cotangent of x for a cotangent g of xhat (may be undefined): rstd * (g - mean(g) -
/// xhat * mean(g * xhat)), the two mean terms coming from the statistics' own dependence on
/// x. Cotangents that reach x through the statistics outputs are given as `shift` and `slope`
/// (statistics-shaped, may be undefined), added as shift + xhat * slope. Computed as
/// rstd * g + xhat * B + A with statistics-sized A and B, which saves full-size passes.
inline Tensor standardize_vjp(const Tensor& g, const Tensor& xhat, const Tensor& rstd, const ops::Axes& axes,
                              Tensor shift, Tensor slope) {
  Tensor dx;
  if (g.defined()) {
    rules::accumulate(shift, -(rstd * mean_over(g, axes)));
    rules::accumulate(slope, -(rstd * mean_over(g * xhat, axes)));
    dx = rstd * g;
  }
  if (slope.defined()) rules::accumulate(dx, xhat * slope);
  if (shift.defined()) rules::accumulate(dx, shift);
  return dx;
}

/// Tangent of xhat for a tangent tx of x, with the pieces the statistics' tangents are made
/// of: m1 = mean(tx) (the mean's tangent) and m2 = mean(xhat * tx) (the variance's tangent is
/// 2 * m2 / rstd, rstd's is -rstd^2 * m2).
struct StandardizeJvp {
  Tensor dxhat, m1, m2;
};
inline StandardizeJvp standardize_jvp(const Tensor& tx, const Tensor& xhat, const Tensor& rstd, const ops::Axes& axes) {
  StandardizeJvp r;
  r.m1 = mean_over(tx, axes);
  r.m2 = mean_over(xhat * tx, axes);
  r.dxhat = rstd * (tx - r.m1 - xhat * r.m2);
  return r;
}

/// Axes [from, to).
inline ops::Axes range_axes(int64_t from, int64_t to) {
  ops::Axes a;
  for (int64_t i = from; i < to; ++i) a.push_back(i);
  return a;
}

/// Every axis of a rank-`rank` tensor but axis 1 (the channel axis of (N, C, *)).
inline ops::Axes all_but_channels(int64_t rank) {
  ops::Axes a{0};
  for (int64_t i = 2; i < rank; ++i) a.push_back(i);
  return a;
}

/// (1, C, 1, ...) for per-channel parameters of a rank-`rank` input.
inline Shape channel_shape(Dim C, int64_t rank) {
  Shape s(static_cast<size_t>(rank), 1);
  s[1] = C;
  return s;
}

/// t (may be undefined) cast to `dt`.
inline Tensor to_dt(const Tensor& t, DType dt) { return t.defined() ? t.to(dt) : t; }

}  // namespace spore::autodiff::norm
