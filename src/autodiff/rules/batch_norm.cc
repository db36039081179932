// SPDX-License-Identifier: Apache-2.0
// Rules of batch_norm. Training normalizes with the batch mean and biased variance (outputs 1
// and 2), which depend on x; inference with the running statistics (inputs), which are then
// differentiable inputs like any other (outputs 1 and 2 are those inputs, widened). The
// running-statistics update is done by the public op outside the primitive and is not
// differentiated. Work happens in the statistics dtype; results are cast back.
#include "autodiff/rules/norm_core.h"
#include "prims/batch_norm.h"
#include "prims/batch_norm_grad.h"
#include "runtime/dispatch.h"
#include "prims/layer_norm.h"

namespace spore::autodiff {
namespace {

using norm::to_dt;
using prims::BatchNormAttrs;
using rules::accumulate;

struct Parts {
  DType sd;
  Shape cs;        // (1, C, 1, ...)
  ops::Axes axes;  // every axis but the channels
  double n = 1;    // elements per channel
  int wi = -1, bi = -1, mi = -1, vi = -1;
  Tensor mean, var, rstd, xhat, w;  // broadcast as cs; xhat as x
};

Parts parts_of(const BatchNormAttrs& at, const Tensor& x, const Tensor& mean_out, const Tensor& var_out,
               std::span<const Tensor> inputs) {
  Parts p;
  p.sd = prims::stats_dtype(x.dtype());
  p.cs = norm::channel_shape(x.shape()[1], x.dim());
  p.axes = norm::all_but_channels(x.dim());
  for (int64_t ax : p.axes) p.n *= static_cast<double>(x.shape()[ax]);
  int k = 1;
  if (at.has_weight) p.wi = k++;
  if (at.has_bias) p.bi = k++;
  if (at.has_running) p.mi = k, p.vi = k + 1;
  p.mean = mean_out.reshape(p.cs);
  p.var = var_out.reshape(p.cs);
  p.rstd = ops::rsqrt(p.var + at.eps);
  p.xhat = (x.to(p.sd) - p.mean) * p.rstd;
  if (p.wi > 0) p.w = inputs[p.wi].to(p.sd).reshape(p.cs);
  return p;
}

void batch_norm_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& at = *static_cast<const BatchNormAttrs*>(a.attrs);
  const Tensor& x = a.inputs[0];
  const Parts p = parts_of(at, x, a.outputs[1], a.outputs[2], a.inputs);
  const Shape C = {x.shape()[1]};
  Tensor dxhat;
  if (at.training) {
    if (a.tangents[0].defined()) {
      auto j = norm::standardize_jvp(a.tangents[0].to(p.sd), p.xhat, p.rstd, p.axes);
      dxhat = j.dxhat;
      out[1] = j.m1.reshape(C);
      out[2] = (j.m2 * 2.0 / p.rstd).reshape(C);  // d mean((x - mean)^2) = 2 mean((x - mean) tx)
    }
  } else {
    // xhat = (x - rm) * (rv + eps)^-1/2.
    if (a.tangents[0].defined()) dxhat = a.tangents[0].to(p.sd) * p.rstd;
    const Tensor& tm = a.tangents[p.mi];
    const Tensor& tv = a.tangents[p.vi];
    if (tm.defined()) {
      const Tensor t = tm.to(p.sd);
      accumulate(dxhat, -(t.reshape(p.cs) * p.rstd));
      out[1] = t;
    }
    if (tv.defined()) {
      const Tensor t = tv.to(p.sd);
      accumulate(dxhat, p.xhat * (t.reshape(p.cs) * p.rstd * p.rstd * -0.5));
      out[2] = t;
    }
  }
  Tensor ty;
  if (dxhat.defined()) ty = p.w.defined() ? dxhat * p.w : dxhat;
  if (p.wi > 0 && a.tangents[p.wi].defined()) accumulate(ty, p.xhat * a.tangents[p.wi].to(p.sd).reshape(p.cs));
  if (p.bi > 0 && a.tangents[p.bi].defined()) accumulate(ty, a.tangents[p.bi].to(p.sd).reshape(p.cs));
  if (ty.defined()) out[0] = rules::broadcast_tangent(ty, x.shape()).to(x.dtype());
}

// The usual training case, where the statistics outputs get no cotangent (they only feed the
// running-statistics update): one batch_norm_grad node, whose kernel makes dx and the weight
// and bias gradients in two passes over dy and x.
bool vjp_by_batch_norm_grad(const BatchNormAttrs& at, const VjpArgs& a, std::span<Tensor> in) {
  if (!at.training || !a.cotangents[0].defined() || a.cotangents[1].defined() || a.cotangents[2].defined())
    return false;
  const Tensor& x = a.inputs[0];
  const int wi = at.has_weight ? 1 : -1, bi = at.has_bias ? 1 + at.has_weight : -1;
  prims::BatchNormGradAttrs ga{at.eps, at.has_weight};
  std::vector<Tensor> ins = {a.cotangents[0].to(x.dtype()), x, a.outputs[1], a.outputs[2]};
  if (at.has_weight) ins.push_back(a.inputs[static_cast<size_t>(wi)]);
  auto r = runtime::dispatch(prims::batch_norm_grad_primitive(), &ga, ins);
  if (a.needs[0]) in[0] = std::move(r.t[0]);
  if (wi > 0 && a.needs[static_cast<size_t>(wi)]) in[static_cast<size_t>(wi)] = r.t[1].to(a.in_types[static_cast<size_t>(wi)].dtype);
  if (bi > 0 && a.needs[static_cast<size_t>(bi)]) in[static_cast<size_t>(bi)] = r.t[2].to(a.in_types[static_cast<size_t>(bi)].dtype);
  return true;
}

void batch_norm_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& at = *static_cast<const BatchNormAttrs*>(a.attrs);
  if (vjp_by_batch_norm_grad(at, a, in)) return;
  const Tensor& x = a.inputs[0];
  const Parts p = parts_of(at, x, a.outputs[1], a.outputs[2], a.inputs);
  const Tensor ct = to_dt(a.cotangents[0], p.sd);
  const Tensor ct_mean = to_dt(a.cotangents[1], p.sd), ct_var = to_dt(a.cotangents[2], p.sd);
  Tensor g;  // cotangent of xhat
  if (ct.defined()) g = p.w.defined() ? ct * p.w : ct;
  if (at.training) {
    if (a.needs[0]) {
      Tensor shift, slope;
      if (ct_mean.defined()) shift = ct_mean.reshape(p.cs) * (1.0 / p.n);
      // d var / dx = 2 (x - mean) / n = 2 xhat / (rstd n).
      if (ct_var.defined()) slope = ct_var.reshape(p.cs) * (2.0 / p.n) / p.rstd;
      Tensor dx = norm::standardize_vjp(g, p.xhat, p.rstd, p.axes, shift, slope);
      if (dx.defined()) in[0] = rules::broadcast_tangent(dx, x.shape()).to(x.dtype());
    }
  } else {
    if (a.needs[0] && g.defined()) in[0] = (g * p.rstd).to(x.dtype());
    if (p.mi > 0 && a.needs[p.mi]) {
      Tensor d = ct_mean;
      if (g.defined()) accumulate(d, -(ops::sum(g, p.axes) * p.rstd.reshape({x.shape()[1]})));
      if (d.defined()) in[p.mi] = d.to(a.in_types[p.mi].dtype);
    }
    if (p.vi > 0 && a.needs[p.vi]) {
      Tensor d = ct_var;
      if (g.defined()) {
        const Tensor r = p.rstd.reshape({x.shape()[1]});
        accumulate(d, ops::sum(g * p.xhat, p.axes) * (r * r * -0.5));
      }
      if (d.defined()) in[p.vi] = d.to(a.in_types[p.vi].dtype);
    }
  }
  if (!ct.defined()) return;
  if (p.wi > 0 && a.needs[p.wi]) in[p.wi] = ops::sum(ct * p.xhat, p.axes).to(a.in_types[p.wi].dtype);
  if (p.bi > 0 && a.needs[p.bi]) in[p.bi] = ops::sum(ct, p.axes).to(a.in_types[p.bi].dtype);
}

}  // namespace

void install_batch_norm_rules() {
  // x and the weight (index 1 or 2 with the flags; a bias there is tiny), and the statistics
  // used, which stand in for the running ones in inference.
  def_rules(prims::batch_norm_primitive(), {bit(0) | bit(1) | bit(2), bit(1) | bit(2)}, batch_norm_jvp,
            batch_norm_vjp);
  // The statistics outputs usually get no cotangent (they feed only the running-statistics
  // update): the vjp must see that, not zeros, to take the batch_norm_grad path.
  const_cast<Primitive&>(prims::batch_norm_primitive()).sparse_cotangents = true;  // a rule-slot-like flag, set once
}

}  // namespace spore::autodiff
