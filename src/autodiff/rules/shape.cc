// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of the shape primitives: the views, indexing and sorting families in their
// own files (shape_parts.h), and here the copying movers concat, pad, flip, roll and tri. All are
// linear in their floating input, so each jvp is the op applied to the tangent and each vjp its
// adjoint, built from ops whose own rules are in this family (differentiable to any order).
#include "autodiff/rules/shape_parts.h"
#include "prims/concat.h"
#include "prims/pad.h"
#include "prims/tri.h"

namespace spore::autodiff {
namespace {

using prims::PadAttrs;
using prims::PadKind;

void concat_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& c = *static_cast<const prims::ConcatAttrs*>(a.attrs);
  std::vector<Tensor> ts;
  ts.reserve(a.inputs.size());
  for (size_t i = 0; i < a.inputs.size(); ++i)
    ts.push_back(a.tangents[i].defined() ? a.tangents[i] : ops::zeros_like(a.inputs[i]));
  out[0] = ops::concat(ts, c.axis);
}
void concat_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& c = *static_cast<const prims::ConcatAttrs*>(a.attrs);
  int64_t pos = 0;
  for (size_t i = 0; i < a.in_types.size(); ++i) {
    const int64_t n = a.in_types[i].shape[static_cast<size_t>(c.axis)];
    if (a.needs[i]) in[i] = ops::slice(a.cotangents[0], c.axis, pos, pos + n);
    pos += n;
  }
}

ops::PadMode mode_of(PadKind k) {
  return k == PadKind::Reflect ? ops::PadMode::Reflect
         : k == PadKind::Replicate ? ops::PadMode::Replicate
                                   : ops::PadMode::Constant;
}

// The tangent of the constant is zero, so constant mode pads the tangent with 0.
void pad_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& p = *static_cast<const PadAttrs*>(a.attrs);
  if (a.tangents[0].defined()) out[0] = rules::pad_axes(a.tangents[0], p.before, p.after, mode_of(p.mode));
}

// Padding is separable: the output is the input padded one axis after another, so the adjoint
// is one per-axis adjoint after another. Per axis, the core is the slice [b, b + n); reflect adds
// the mirrored borders back onto the positions they copied (1 .. b and n-1-e .. n-2), replicate
// adds each border's sum onto its edge.
void pad_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& p = *static_cast<const PadAttrs*>(a.attrs);
  const Shape& xs = a.in_types[0].shape;
  Tensor g = a.cotangents[0];
  for (size_t i = 0; i < xs.size(); ++i) {
    const int64_t b = p.before[i], e = p.after[i], n = xs[i], d = static_cast<int64_t>(i);
    if (b == 0 && e == 0) continue;
    Tensor core = ops::slice(g, d, b, b + n);
    if (p.mode == PadKind::Reflect) {
      if (b > 0) core = core + rules::pad_axis(ops::flip(ops::slice(g, d, 0, b), {d}), d, 1, n - 1 - b);
      if (e > 0) core = core + rules::pad_axis(ops::flip(ops::slice(g, d, b + n, b + n + e), {d}), d, n - 1 - e, 1);
    } else if (p.mode == PadKind::Replicate) {
      if (b > 0) core = core + rules::pad_axis(ops::sum(ops::slice(g, d, 0, b), {d}, true), d, 0, n - 1);
      if (e > 0) core = core + rules::pad_axis(ops::sum(ops::slice(g, d, b + n, b + n + e), {d}, true), d, n - 1, 0);
    }
    g = core;
  }
  in[0] = g;
}

void flip_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& f = *static_cast<const prims::FlipAttrs*>(a.attrs);
  if (a.tangents[0].defined()) out[0] = ops::flip(a.tangents[0], {f.axes.begin(), f.axes.end()});
}
void flip_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& f = *static_cast<const prims::FlipAttrs*>(a.attrs);
  in[0] = ops::flip(a.cotangents[0], {f.axes.begin(), f.axes.end()});
}

/// Rolls every axis of t by sign * the primitive's shift (a 0-d tensor has nothing to roll).
Tensor roll_by(const Tensor& t, const prims::RollAttrs& r, int64_t sign) {
  if (t.dim() == 0) return t;
  std::vector<int64_t> shifts, axes;
  for (int64_t d = 0; d < t.dim(); ++d) {
    shifts.push_back(sign * r.shifts[static_cast<size_t>(d)]);
    axes.push_back(d);
  }
  return ops::roll(t, shifts, axes);
}
void roll_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (a.tangents[0].defined()) out[0] = roll_by(a.tangents[0], *static_cast<const prims::RollAttrs*>(a.attrs), 1);
}
void roll_vjp(const VjpArgs& a, std::span<Tensor> in) {
  in[0] = roll_by(a.cotangents[0], *static_cast<const prims::RollAttrs*>(a.attrs), -1);
}

/// The same triangle mask applied to t: tril/triu are their own adjoints.
Tensor tri_of(const Tensor& t, const prims::TriAttrs& r) {
  return r.upper ? ops::triu(t, r.diagonal) : ops::tril(t, r.diagonal);
}
void tri_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (a.tangents[0].defined()) out[0] = tri_of(a.tangents[0], *static_cast<const prims::TriAttrs*>(a.attrs));
}
void tri_vjp(const VjpArgs& a, std::span<Tensor> in) {
  in[0] = tri_of(a.cotangents[0], *static_cast<const prims::TriAttrs*>(a.attrs));
}

}  // namespace

void install_shape_rules() {
  install_view_rules();
  install_indexing_rules();
  install_sort_rules();
  def_rules("concat", {}, concat_jvp, concat_vjp);
  def_rules("pad", {}, pad_jvp, pad_vjp);
  def_rules("flip", {}, flip_jvp, flip_vjp);
  def_rules("roll", {}, roll_jvp, roll_vjp);
  def_rules("tri", {}, tri_jvp, tri_vjp);
}

}  // namespace spore::autodiff
