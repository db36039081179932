// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of the view primitives. Every one is linear, so the jvp applies the view to
// the tangent and the vjp is its adjoint. Adjoints that place values into zeros (slice,
// diagonal) are built from constant pad, reshape and slice only: those three are each other's
// adjoints, so the rules stay differentiable to any order with no mask or index tensor.
#include "autodiff/rules/shape_parts.h"
#include "prims/views.h"

namespace spore::autodiff {
namespace {

using rules::pad_axes;
using prims::DiagonalAttrs;
using prims::SliceAttrs;

void reshape_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (a.tangents[0].defined()) out[0] = ops::reshape(a.tangents[0], a.outputs[0].shape());
}
void reshape_vjp(const VjpArgs& a, std::span<Tensor> in) { in[0] = ops::reshape(a.cotangents[0], a.in_types[0].shape); }

void permute_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& p = *static_cast<const prims::PermuteAttrs*>(a.attrs);
  if (a.tangents[0].defined()) out[0] = ops::permute(a.tangents[0], {p.axes.begin(), p.axes.end()});
}
void permute_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& p = *static_cast<const prims::PermuteAttrs*>(a.attrs);
  std::vector<int64_t> inv(p.axes.size());
  for (size_t i = 0; i < p.axes.size(); ++i) inv[static_cast<size_t>(p.axes[i])] = static_cast<int64_t>(i);
  in[0] = ops::permute(a.cotangents[0], inv);
}

void slice_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& s = *static_cast<const SliceAttrs*>(a.attrs);
  if (!a.tangents[0].defined()) return;
  Tensor t = a.tangents[0];
  for (int64_t d = 0; d < t.dim(); ++d) {
    const size_t i = static_cast<size_t>(d);
    if (s.starts[i] == 0 && s.stops[i] == t.shape()[i] && s.steps[i] == 1) continue;
    t = ops::slice(t, d, s.starts[i], std::max(s.stops[i], s.starts[i]), s.steps[i]);
  }
  out[0] = t;
}

/// g with step - 1 zeros after each element along `axis` (length m becomes m * step), so that
/// element k lands at k * step: a size-1 axis padded to `step`, then merged.
Tensor spread(const Tensor& g, int64_t axis, int64_t step) {
  Tensor u = ops::unsqueeze(g, axis + 1);
  u = rules::pad_axis(u, axis + 1, 0, step - 1);
  Shape s = g.shape();
  s[static_cast<size_t>(axis)] *= step;
  return ops::reshape(u, s);
}

// The cotangent placed at start + k * step of each axis in zeros of the input's shape.
void slice_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& s = *static_cast<const SliceAttrs*>(a.attrs);
  const Shape& xs = a.in_types[0].shape;
  Tensor g = a.cotangents[0];
  if (g.numel() == 0) return;  // an empty slice: the gradient is zero
  std::vector<int64_t> before(xs.size()), after(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const int64_t d = static_cast<int64_t>(i);
    if (s.steps[i] > 1) g = spread(g, d, s.steps[i]);
    before[i] = s.starts[i];
    after[i] = xs[i] - s.starts[i] - g.shape()[i];  // < 0 crops the zeros spread past the end
  }
  bool crop = false;
  for (size_t i = 0; i < xs.size(); ++i) crop |= after[i] < 0;
  if (crop) {
    in[0] = pad_axes(g, before, after);
    return;
  }
  // Placing into zeros by concatenation: a copy of contiguous blocks, ~3x faster than the
  // general pad kernel on the common case (chunk/split of an LSTM's gates); concat's own rules
  // (slices) keep it differentiable. The zeros are one scalar broadcast (a stride-0 view that
  // concat fills rows from), not materialized blocks.
  const Tensor zero = ops::zeros({}, {g.dtype()});
  for (size_t i = 0; i < xs.size(); ++i) {
    if (before[i] == 0 && after[i] == 0) continue;
    std::vector<Tensor> parts;
    Shape zs = g.shape();
    if (before[i] > 0) {
      zs[i] = before[i];
      parts.push_back(ops::broadcast_to(zero, zs));
    }
    parts.push_back(g);
    if (after[i] > 0) {
      zs[i] = after[i];
      parts.push_back(ops::broadcast_to(zero, zs));
    }
    g = ops::concat(parts, static_cast<int64_t>(i));
  }
  in[0] = g;
}

void broadcast_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (a.tangents[0].defined()) out[0] = ops::broadcast_to(a.tangents[0], a.outputs[0].shape());
}
void broadcast_vjp(const VjpArgs& a, std::span<Tensor> in) {
  in[0] = rules::unbroadcast(a.cotangents[0], a.in_types[0]);
}

void diagonal_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& d = *static_cast<const DiagonalAttrs*>(a.attrs);
  if (a.tangents[0].defined()) out[0] = ops::diagonal(a.tangents[0], d.offset, d.axis1, d.axis2);
}

// The cotangent (others..., L) becomes an (others..., n1, n2) matrix that holds it on the
// offset diagonal, then axis1 and axis2 go back to their places.
void diagonal_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& d = *static_cast<const DiagonalAttrs*>(a.attrs);
  const Shape& xs = a.in_types[0].shape;
  Tensor g = a.cotangents[0];
  if (g.numel() == 0) return;  // no diagonal element, or an empty batch: zero gradient
  const int64_t r = g.dim();  // others + 1
  const int64_t len = g.shape().back(), n1 = xs[d.axis1], n2 = xs[d.axis2];
  // A diagonal (L, L) matrix from a vector: pad each element with L zeros, then cut the flat
  // run of L * (L + 1) back to L * L: element k sits at k * (L + 1), i.e. at (k, k).
  Shape lead(g.shape().begin(), g.shape().end() - 1);
  g = rules::pad_axis(ops::unsqueeze(g, r), r, 0, len);
  Shape flat = lead;
  flat.push_back(len * (len + 1));
  g = ops::slice(ops::reshape(g, flat), r - 1, 0, len * len);
  Shape sq = lead;
  sq.push_back(len);
  sq.push_back(len);
  g = ops::reshape(g, sq);
  // Place the L x L block at rows max(0, -offset), cols max(0, offset) of the n1 x n2 matrix.
  const int64_t r0 = std::max<int64_t>(0, -d.offset), c0 = std::max<int64_t>(0, d.offset);
  std::vector<int64_t> before(static_cast<size_t>(r + 1), 0), after(static_cast<size_t>(r + 1), 0);
  before[static_cast<size_t>(r - 1)] = r0;
  after[static_cast<size_t>(r - 1)] = n1 - r0 - len;
  before[static_cast<size_t>(r)] = c0;
  after[static_cast<size_t>(r)] = n2 - c0 - len;
  g = pad_axes(g, before, after);
  // g's axes are (others in order, axis1, axis2); put each back at its place in x.
  std::vector<int64_t> perm(xs.size());
  int64_t k = 0;
  for (size_t i = 0; i < xs.size(); ++i)
    if (static_cast<int64_t>(i) != d.axis1 && static_cast<int64_t>(i) != d.axis2) perm[i] = k++;
  perm[static_cast<size_t>(d.axis1)] = r - 1;
  perm[static_cast<size_t>(d.axis2)] = r;
  in[0] = ops::permute(g, perm);
}

}  // namespace

void install_view_rules() {
  // bind_sizes is x itself (the sizes input is an integer): tangent and cotangent pass through.
  def_rules("bind_sizes", {}, [](const JvpArgs& a, std::span<Tensor> out) { out[0] = a.tangents[0]; },
            [](const VjpArgs& a, std::span<Tensor> in) { in[0] = a.cotangents[0]; });
  def_rules("reshape", {}, reshape_jvp, reshape_vjp);
  def_rules("permute", {}, permute_jvp, permute_vjp);
  def_rules("slice", {}, slice_jvp, slice_vjp);
  def_rules("broadcast_to", {}, broadcast_jvp, broadcast_vjp);
  def_rules("diagonal", {}, diagonal_jvp, diagonal_vjp);
}

}  // namespace spore::autodiff
