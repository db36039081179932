// SPDX-License-Identifier: Apache-2.0
// Rules of layer_norm, group_norm and rms_norm in closed form, from the saved statistics
// (mean/rstd outputs) rather than through the decomposition. The statistics are outputs too:
// the jvp gives them tangents and the vjp takes their cotangents, which is what keeps grad of
// grad exact (the vjp's own formula reads them). Work happens in the statistics dtype
// (float32 for 16-bit inputs) and results are cast back to each primal's dtype.
#include "autodiff/rules/norm_core.h"
#include "prims/group_norm.h"
#include "prims/layer_norm.h"
#include "prims/rms_norm.h"

namespace spore::autodiff {
namespace {

using norm::mean_over;
using norm::sum_over;
using norm::to_dt;
using rules::accumulate;

/// The geometry of a norm in its standardized layout: `xs` is the layout the statistics
/// broadcast against (x itself, or (N, G, M) for group norm), `keep` the statistics' shape
/// there, `axes` the normalized axes, `n` how many elements each statistic covers.
struct Layout {
  Shape xs, keep, stats;
  ops::Axes axes;
  double n = 1;
};

Layout trailing_layout(const Shape& x, int64_t axis) {
  Layout l;
  l.xs = x;
  l.stats = Shape(x.begin(), x.begin() + axis);
  l.keep = x;
  for (size_t i = static_cast<size_t>(axis); i < x.size(); ++i) l.keep[i] = 1, l.n *= static_cast<double>(x[i]);
  l.axes = norm::range_axes(axis, static_cast<int64_t>(x.size()));
  return l;
}

Layout group_layout(const Shape& x, int64_t groups) {
  Dim m = x[1] / groups;
  for (size_t i = 2; i < x.size(); ++i) m *= x[i];
  Layout l;
  l.xs = {x[0], groups, m};
  l.stats = {x[0], groups};
  l.keep = {x[0], groups, 1};
  l.axes = {2};
  l.n = static_cast<double>(m);
  return l;
}

/// Cotangent of x in the standardized layout from the cotangents of xhat (g), mean and rstd.
Tensor stats_vjp(const Layout& l, const Tensor& g, const Tensor& xhat, const Tensor& rstd, const Tensor& ct_mean,
                 const Tensor& ct_rstd) {
  Tensor shift, slope;
  if (ct_mean.defined()) shift = ct_mean.reshape(l.keep) * (1.0 / l.n);
  // d rstd / dx = -rstd^3 (x - mean) / n = -rstd^2 xhat / n.
  if (ct_rstd.defined()) slope = ct_rstd.reshape(l.keep) * rstd * rstd * (-1.0 / l.n);
  Tensor dx = norm::standardize_vjp(g, xhat, rstd, l.axes, shift, slope);
  return dx.defined() ? rules::broadcast_tangent(dx, l.xs) : dx;
}

// ---- layer_norm ---------------------------------------------------------------------------

struct Affine {
  Tensor w, b;  // in the statistics dtype; undefined when absent
  int wi = -1, bi = -1;
};

template <class A>
Affine affine_of(const A& at, std::span<const Tensor> inputs, DType sd) {
  Affine f;
  int k = 1;
  if (at.has_weight) f.wi = k++;
  if (at.has_bias) f.bi = k++;
  if (f.wi > 0 && inputs[f.wi].defined()) f.w = inputs[f.wi].to(sd);
  return f;
}

/// What every layer/group norm rule starts from: the statistics dtype, the layout, the affine
/// inputs, rstd and xhat in the standardized layout, from the saved mean/rstd outputs.
struct Saved {
  DType sd;
  Layout l;
  Affine f;
  Tensor rstd, xhat;
};

template <class A>
Saved saved_of(const A& at, std::span<const Tensor> inputs, std::span<const Tensor> outputs, Layout l) {
  const Tensor& x = inputs[0];
  Saved s{prims::stats_dtype(x.dtype()), std::move(l), {}, {}, {}};
  s.f = affine_of(at, inputs, s.sd);
  s.rstd = outputs[2].reshape(s.l.keep);
  Tensor xs = x.to(s.sd);
  if (!(xs.shape() == s.l.xs)) xs = xs.reshape(s.l.xs);
  s.xhat = (xs - outputs[1].reshape(s.l.keep)) * s.rstd;
  return s;
}

void layer_norm_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& at = *static_cast<const prims::LayerNormAttrs*>(a.attrs);
  const Tensor& x = a.inputs[0];
  const Saved s = saved_of(at, a.inputs, a.outputs, trailing_layout(x.shape(), at.axis));
  const DType sd = s.sd;
  const Layout& l = s.l;
  const Affine& f = s.f;
  const Tensor &rstd = s.rstd, &xhat = s.xhat;
  Tensor ty;
  if (a.tangents[0].defined()) {
    auto j = norm::standardize_jvp(a.tangents[0].to(sd), xhat, rstd, l.axes);
    ty = f.w.defined() ? j.dxhat * f.w : j.dxhat;
    out[1] = rules::broadcast_tangent(j.m1, l.keep).reshape(l.stats);
    out[2] = rules::broadcast_tangent(-(rstd * rstd * j.m2), l.keep).reshape(l.stats);
  }
  if (f.wi > 0 && a.tangents[f.wi].defined()) accumulate(ty, xhat * a.tangents[f.wi].to(sd));
  if (f.bi > 0 && a.tangents[f.bi].defined()) accumulate(ty, a.tangents[f.bi].to(sd));
  if (ty.defined()) out[0] = rules::broadcast_tangent(ty, x.shape()).to(x.dtype());
}

void layer_norm_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& at = *static_cast<const prims::LayerNormAttrs*>(a.attrs);
  const Tensor& x = a.inputs[0];
  const Saved s = saved_of(at, a.inputs, a.outputs, trailing_layout(x.shape(), at.axis));
  const DType sd = s.sd;
  const Layout& l = s.l;
  const Affine& f = s.f;
  const Tensor &rstd = s.rstd, &xhat = s.xhat;
  const Tensor ct = to_dt(a.cotangents[0], sd);
  const ops::Axes lead = norm::range_axes(0, at.axis);
  if (a.needs[0]) {
    Tensor g = ct.defined() && f.w.defined() ? ct * f.w : ct;
    Tensor dx = stats_vjp(l, g, xhat, rstd, to_dt(a.cotangents[1], sd), to_dt(a.cotangents[2], sd));
    if (dx.defined()) in[0] = dx.to(x.dtype());
  }
  if (!ct.defined()) return;
  if (f.wi > 0 && a.needs[f.wi]) in[f.wi] = sum_over(ct * xhat, lead).to(a.in_types[f.wi].dtype);
  if (f.bi > 0 && a.needs[f.bi]) in[f.bi] = sum_over(ct, lead).to(a.in_types[f.bi].dtype);
}

// ---- group_norm ---------------------------------------------------------------------------

void group_norm_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& at = *static_cast<const prims::GroupNormAttrs*>(a.attrs);
  const Tensor& x = a.inputs[0];
  const Saved s = saved_of(at, a.inputs, a.outputs, group_layout(x.shape(), at.groups));
  const DType sd = s.sd;
  const Layout& l = s.l;
  const Affine& f = s.f;
  const Tensor &rstd = s.rstd, &xhat_g = s.xhat;
  const Shape cs = norm::channel_shape(x.shape()[1], x.dim());
  const Tensor xhat = xhat_g.reshape(x.shape());
  Tensor ty;
  if (a.tangents[0].defined()) {
    auto j = norm::standardize_jvp(a.tangents[0].to(sd).reshape(l.xs), xhat_g, rstd, l.axes);
    const Tensor dxhat = j.dxhat.reshape(x.shape());
    ty = f.w.defined() ? dxhat * f.w.reshape(cs) : dxhat;
    out[1] = j.m1.reshape(l.stats);
    out[2] = (-(rstd * rstd * j.m2)).reshape(l.stats);
  }
  if (f.wi > 0 && a.tangents[f.wi].defined()) accumulate(ty, xhat * a.tangents[f.wi].to(sd).reshape(cs));
  if (f.bi > 0 && a.tangents[f.bi].defined()) accumulate(ty, a.tangents[f.bi].to(sd).reshape(cs));
  if (ty.defined()) out[0] = rules::broadcast_tangent(ty, x.shape()).to(x.dtype());
}

void group_norm_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& at = *static_cast<const prims::GroupNormAttrs*>(a.attrs);
  const Tensor& x = a.inputs[0];
  const Saved s = saved_of(at, a.inputs, a.outputs, group_layout(x.shape(), at.groups));
  const DType sd = s.sd;
  const Layout& l = s.l;
  const Affine& f = s.f;
  const Tensor &rstd = s.rstd, &xhat_g = s.xhat;
  const Shape cs = norm::channel_shape(x.shape()[1], x.dim());
  const Tensor ct = to_dt(a.cotangents[0], sd);
  if (a.needs[0]) {
    Tensor g = ct.defined() && f.w.defined() ? ct * f.w.reshape(cs) : ct;
    if (g.defined()) g = g.reshape(l.xs);
    Tensor dx = stats_vjp(l, g, xhat_g, rstd, to_dt(a.cotangents[1], sd), to_dt(a.cotangents[2], sd));
    if (dx.defined()) in[0] = dx.reshape(x.shape()).to(x.dtype());
  }
  if (!ct.defined()) return;
  const ops::Axes nc = norm::all_but_channels(x.dim());
  if (f.wi > 0 && a.needs[f.wi]) in[f.wi] = ops::sum(ct * xhat_g.reshape(x.shape()), nc).to(a.in_types[f.wi].dtype);
  if (f.bi > 0 && a.needs[f.bi]) in[f.bi] = ops::sum(ct, nc).to(a.in_types[f.bi].dtype);
}

// ---- rms_norm: xhat = x * rstd, rstd = 1 / sqrt(mean(x^2) + eps) ------------------------------

void rms_norm_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& at = *static_cast<const prims::RmsNormAttrs*>(a.attrs);
  const Tensor& x = a.inputs[0];
  const DType sd = prims::stats_dtype(x.dtype());
  const Layout l = trailing_layout(x.shape(), at.axis);
  const Tensor rstd = a.outputs[1].reshape(l.keep);
  const Tensor xhat = x.to(sd) * rstd;
  const Tensor w = at.has_weight ? a.inputs[1].to(sd) : Tensor();
  Tensor ty;
  if (a.tangents[0].defined()) {
    const Tensor tx = a.tangents[0].to(sd);
    const Tensor m2 = mean_over(xhat * tx, l.axes);
    const Tensor dxhat = rstd * (tx - xhat * m2);
    ty = w.defined() ? dxhat * w : dxhat;
    out[1] = rules::broadcast_tangent(-(rstd * rstd * m2), l.keep).reshape(l.stats);
  }
  if (at.has_weight && a.tangents[1].defined()) accumulate(ty, xhat * a.tangents[1].to(sd));
  if (ty.defined()) out[0] = rules::broadcast_tangent(ty, x.shape()).to(x.dtype());
}

void rms_norm_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& at = *static_cast<const prims::RmsNormAttrs*>(a.attrs);
  const Tensor& x = a.inputs[0];
  const DType sd = prims::stats_dtype(x.dtype());
  const Layout l = trailing_layout(x.shape(), at.axis);
  const Tensor rstd = a.outputs[1].reshape(l.keep);
  const Tensor xhat = x.to(sd) * rstd;
  const Tensor w = at.has_weight ? a.inputs[1].to(sd) : Tensor();
  const Tensor ct = to_dt(a.cotangents[0], sd);
  if (a.needs[0]) {
    // rstd * (g - xhat * mean(g * xhat)) - xhat * ct_rstd * rstd^2 / n, as rstd * g + xhat * B.
    Tensor dx, slope;
    if (a.cotangents[1].defined()) slope = a.cotangents[1].to(sd).reshape(l.keep) * rstd * rstd * (-1.0 / l.n);
    if (ct.defined()) {
      const Tensor g = w.defined() ? ct * w : ct;
      accumulate(slope, -(rstd * mean_over(g * xhat, l.axes)));
      dx = rstd * g;
    }
    if (slope.defined()) accumulate(dx, xhat * slope);
    if (dx.defined()) in[0] = rules::broadcast_tangent(dx, x.shape()).to(x.dtype());
  }
  if (at.has_weight && a.needs[1] && ct.defined())
    in[1] = sum_over(ct * xhat, norm::range_axes(0, at.axis)).to(a.in_types[1].dtype);
}

}  // namespace

void install_norm_rules() {
  // x and weight (index 1 holds the bias when there is no weight: small, kept anyway);
  // the statistics outputs.
  def_rules(prims::layer_norm_primitive(), {bit(0) | bit(1), bit(1) | bit(2)}, layer_norm_jvp, layer_norm_vjp);
  def_rules(prims::group_norm_primitive(), {bit(0) | bit(1), bit(1) | bit(2)}, group_norm_jvp, group_norm_vjp);
  def_rules(prims::rms_norm_primitive(), {bit(0) | bit(1), bit(1)}, rms_norm_jvp, rms_norm_vjp);
}

}  // namespace spore::autodiff
