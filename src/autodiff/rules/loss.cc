// SPDX-License-Identifier: Apache-2.0
// Rules of nll_loss and soft_nll_loss. Both are linear in the log-probabilities: per element,
// loss = -sum_c w[c] * q[c] * lp[c], where q is the one-hot target (times 1 - smoothing, plus
// smoothing / C) for nll_loss and the smoothed target probabilities for soft_nll_loss. The
// reduction scales by the output cotangent (none, sum) or by it over the total weight (mean).
// The class weight is differentiated too; for nll_loss's mean, the total weight depends on it.
// Work happens in the statistics dtype (float32 for 16-bit inputs).
#include "autodiff/rules/nn_parts.h"
#include "prims/layer_norm.h"
#include "prims/loss.h"

namespace spore::autodiff {
namespace {

using prims::LossReduction;
using rules::accumulate;

/// The class axis and the shapes a per-class vector and a per-element value broadcast as.
struct Geo {
  int64_t ca = 1;
  Dim C = 1;
  Shape class_shape;
  ops::Axes other;  // every axis but the class axis
  DType sd = DType::Float32;
};

Geo geo_of(const TensorType& lp) {
  Geo g;
  const int64_t r = static_cast<int64_t>(lp.shape.size());
  g.ca = r == 1 ? 0 : 1;
  g.C = lp.shape[g.ca];
  g.class_shape = Shape(static_cast<size_t>(r), 1);
  g.class_shape[g.ca] = g.C;
  for (int64_t i = 0; i < r; ++i)
    if (i != g.ca) g.other.push_back(i);
  g.sd = prims::stats_dtype(lp.dtype);
  return g;
}

Tensor sum_over(const Tensor& t, const ops::Axes& axes) { return axes.empty() ? t : ops::sum(t, axes); }
Tensor times(const Tensor& a, const Tensor& b) { return b.defined() ? a * b : a; }

/// The per-element cotangent as it broadcasts against lp: the output cotangent for none and
/// sum, divided by `denom` for mean.
Tensor element_scale(const Geo& g, LossReduction r, const Tensor& ct, const Tensor& denom) {
  if (r == LossReduction::None) return ops::unsqueeze(ct, g.ca);
  if (r == LossReduction::Sum) return ct;
  return ct / denom;
}

// ---- nll_loss -----------------------------------------------------------------------------

struct Nll {
  Tensor ohf;  // one-hot of the target, 0 on ignored elements (lp's shape, sd)
  Tensor mask;  // 1 where not ignored, broadcast along the class axis (sd)
  Tensor q;    // the target's weight per class: ohf, smoothed
  Tensor w;    // class weight as class_shape (sd), or undefined
  int wi = -1;
};

Nll nll_of(const prims::NllLossAttrs& at, const Geo& g, const Tensor& target, std::span<const Tensor> inputs) {
  Nll n;
  const Tensor keep = ops::not_equal(target, ops::scalar_tensor(at.ignore_index, DType::Int64));
  Tensor oh = ops::one_hot(ops::where(keep, target, ops::zeros_like(target)), g.C);
  if (g.ca == 1) {  // (N, d..., C) -> (N, C, d...)
    std::vector<int64_t> perm = {0, oh.dim() - 1};
    for (int64_t i = 1; i < oh.dim() - 1; ++i) perm.push_back(i);
    oh = ops::permute(oh, perm);
  }
  n.mask = ops::unsqueeze(keep.to(g.sd), g.ca);
  n.ohf = oh.to(g.sd) * n.mask;
  n.q = at.label_smoothing > 0
            ? n.ohf * (1 - at.label_smoothing) + n.mask * (at.label_smoothing / static_cast<double>(g.C))
            : n.ohf;
  if (at.has_weight) {
    n.wi = 2;
    if (inputs[2].defined()) n.w = inputs[2].to(g.sd).reshape(g.class_shape);
  }
  return n;
}

void nll_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& at = *static_cast<const prims::NllLossAttrs*>(a.attrs);
  const Geo g = geo_of({a.inputs[0].dtype(), false, a.inputs[0].shape()});
  const Nll n = nll_of(at, g, a.inputs[1], a.inputs);
  const Tensor lp = a.inputs[0].to(g.sd);
  Tensor tw;
  if (n.wi > 0 && a.tangents[n.wi].defined()) tw = a.tangents[n.wi].to(g.sd).reshape(g.class_shape);
  Tensor e;  // per-element tangent, summed over classes below
  if (a.tangents[0].defined()) e = times(n.q * a.tangents[0].to(g.sd), n.w);
  if (tw.defined()) accumulate(e, n.q * lp * tw);
  if (!e.defined()) return;
  e = -ops::sum(e, {g.ca});
  Tensor t;
  if (at.reduction == LossReduction::None) t = e;
  else if (at.reduction == LossReduction::Sum) t = ops::sum(e);
  else {
    const Tensor W = ops::sum(times(n.ohf, n.w));
    t = ops::sum(e);
    if (tw.defined()) t = t - a.outputs[0].to(g.sd) * ops::sum(n.ohf * tw);
    t = t / W;
  }
  out[0] = t.to(a.outputs[0].dtype());
}

void nll_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& at = *static_cast<const prims::NllLossAttrs*>(a.attrs);
  const Geo g = geo_of(a.in_types[0]);
  const Nll n = nll_of(at, g, a.inputs[1], a.inputs);
  const Tensor ct = a.cotangents[0].to(g.sd);
  const Tensor W = at.reduction == LossReduction::Mean ? ops::sum(times(n.ohf, n.w)) : Tensor();
  const Tensor s = element_scale(g, at.reduction, ct, W);
  if (a.needs[0]) in[0] = rules::broadcast_tangent(-times(s * n.q, n.w), a.in_types[0].shape).to(a.in_types[0].dtype);
  if (n.wi > 0 && a.needs[n.wi]) {
    Tensor d = -sum_over(rules::broadcast_tangent(s * n.q * a.inputs[0].to(g.sd), a.in_types[0].shape), g.other);
    // mean = S / W with W = sum of the targets' weights: dW/dw[c] counts class c's targets.
    if (at.reduction == LossReduction::Mean) d = d - sum_over(n.ohf, g.other) * (a.outputs[0].to(g.sd) * s);
    in[n.wi] = d.reshape({g.C}).to(a.in_types[n.wi].dtype);
  }
}

// ---- soft_nll_loss ------------------------------------------------------------------------

void soft_nll_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& at = *static_cast<const prims::SoftNllLossAttrs*>(a.attrs);
  const Geo g = geo_of({a.inputs[0].dtype(), false, a.inputs[0].shape()});
  const double ls = at.label_smoothing;
  const Tensor lp = a.inputs[0].to(g.sd);
  const Tensor tt = a.inputs[1].to(g.sd) * (1 - ls) + ls / static_cast<double>(g.C);
  const Tensor w = at.has_weight ? a.inputs[2].to(g.sd).reshape(g.class_shape) : Tensor();
  Tensor e;
  if (a.tangents[0].defined()) e = times(a.tangents[0].to(g.sd) * tt, w);
  if (a.tangents[1].defined()) accumulate(e, times(lp * a.tangents[1].to(g.sd) * (1 - ls), w));
  if (at.has_weight && a.tangents[2].defined()) accumulate(e, lp * tt * a.tangents[2].to(g.sd).reshape(g.class_shape));
  if (!e.defined()) return;
  e = -ops::sum(e, {g.ca});
  Tensor t = at.reduction == LossReduction::None ? e
             : at.reduction == LossReduction::Sum ? ops::sum(e)
                                                   : ops::mean(e);
  out[0] = t.to(a.outputs[0].dtype());
}

void soft_nll_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& at = *static_cast<const prims::SoftNllLossAttrs*>(a.attrs);
  const Geo g = geo_of(a.in_types[0]);
  const double ls = at.label_smoothing;
  const Shape& shape = a.in_types[0].shape;
  double count = 1;  // elements averaged by mean
  for (int64_t ax : g.other) count *= static_cast<double>(shape[ax]);
  const Tensor ct = a.cotangents[0].to(g.sd);
  const Tensor s = at.reduction == LossReduction::Mean ? ct * (1.0 / count) : element_scale(g, at.reduction, ct, {});
  const Tensor lp = a.inputs[0].to(g.sd);
  const Tensor w = at.has_weight ? a.inputs[2].to(g.sd).reshape(g.class_shape) : Tensor();
  if (a.needs[0]) {
    const Tensor tt = a.inputs[1].to(g.sd) * (1 - ls) + ls / static_cast<double>(g.C);
    in[0] = rules::broadcast_tangent(-times(s * tt, w), shape).to(a.in_types[0].dtype);
  }
  if (a.needs[1]) in[1] = rules::broadcast_tangent(-times(s * lp * (1 - ls), w), shape).to(a.in_types[1].dtype);
  if (at.has_weight && a.needs[2]) {
    const Tensor tt = a.inputs[1].to(g.sd) * (1 - ls) + ls / static_cast<double>(g.C);
    Tensor d = -sum_over(rules::broadcast_tangent(s * lp * tt, shape), g.other);
    in[2] = d.reshape({g.C}).to(a.in_types[2].dtype);
  }
}

}  // namespace

void install_loss_rules() {
  // nll_loss keeps its output: the mean's weight gradient reads it.
  def_rules(prims::nll_loss_primitive(), {bit(0) | bit(1) | bit(2), bit(0)}, nll_jvp, nll_vjp);
  def_rules(prims::soft_nll_loss_primitive(), {bit(0) | bit(1) | bit(2), 0}, soft_nll_jvp, soft_nll_vjp);
}

}  // namespace spore::autodiff
