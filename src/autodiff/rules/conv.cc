// SPDX-License-Identifier: Apache-2.0
// Rules of conv, conv_transpose and conv_weight_grad (1-3 spatial dims, NC(D)HW). conv and
// conv_transpose are each other's adjoint in x. conv's weight gradient is one
// conv_weight_grad node (oneDNN's backward-weights on x and dy as stored); conv_transpose's is
// a convolution with the batch and channel roles swapped (swapped_weight_grad). Everything
// is built from the public conv1d/2d/3d, conv_transpose2d, pad, flip, reshapes and those
// primitives, whose rules are here, so the rules differentiate again.
#include "autodiff/rules/nn_parts.h"
#include "prims/conv.h"
#include "prims/conv_weight_grad.h"
#include "runtime/dispatch.h"

namespace spore::autodiff {
namespace {

using prims::ConvAttrs;
using prims::ConvTransposeAttrs;
using prims::IntList;

std::vector<int64_t> vec(const IntList& l) { return {l.begin(), l.end()}; }
int64_t nsp_of(const Tensor& x) { return x.dim() - 2; }
Dim ksize(const Tensor& w, int64_t i) { return w.shape()[i + 2]; }

/// Constant padding (lo, hi) of each spatial dim; negative values crop. No op when all zero.
Tensor pad_spatial(const Tensor& x, const std::vector<int64_t>& lo, const std::vector<int64_t>& hi) {
  bool any = false;
  std::vector<int64_t> pads;
  for (size_t i = lo.size(); i-- > 0;) {
    pads.push_back(lo[i]);
    pads.push_back(hi[i]);
    any |= lo[i] != 0 || hi[i] != 0;
  }
  return any ? ops::pad(x, pads) : x;
}

/// conv with zero padding through the public op of x's rank.
Tensor conv_plain(const Tensor& x, const Tensor& w, const std::vector<int64_t>& stride,
                  const std::vector<int64_t>& dilation, int64_t groups, const std::vector<int64_t>& padding = {0}) {
  ops::ConvOptions o;
  o.stride = stride;
  o.padding = padding;
  o.dilation = dilation;
  o.groups = groups;
  switch (nsp_of(x)) {
    case 1: return ops::conv1d(x, w, {}, o);
    case 2: return ops::conv2d(x, w, {}, o);
    default: return ops::conv3d(x, w, {}, o);
  }
}

/// Zeros inserted between elements along each spatial dim: length (L-1)*s+1.
Tensor dilate(const Tensor& x, const std::vector<int64_t>& stride) {
  Tensor r = x;
  for (size_t i = 0; i < stride.size(); ++i) {
    const int64_t s = stride[i], ax = static_cast<int64_t>(i) + 2;
    if (s == 1) continue;
    const Dim L = r.shape()[ax];
    Shape merged = r.shape();
    merged[ax] = L * s;
    std::vector<int64_t> pads(2 * static_cast<size_t>(r.dim() - ax - 1), 0);  // pad only the new axis
    pads.push_back(0);
    pads.push_back(s - 1);
    r = ops::pad(ops::unsqueeze(r, ax + 1), pads).reshape(merged);
    r = ops::slice(r, ax, 0, (L - 1) * s + 1);
  }
  return r;
}

/// A conv_transpose weight (C, O/g, k...) as the conv weight (O, C/g, k...) of the same groups.
Tensor swap_groups(const Tensor& w, int64_t groups) {
  const Shape& s = w.shape();
  Shape grouped = {groups, s[0] / groups, s[1]};
  Shape out = {s[1] * groups, s[0] / groups};
  for (int64_t i = 2; i < w.dim(); ++i) grouped.push_back(s[i]), out.push_back(s[i]);
  return ops::transpose(w.reshape(grouped), 1, 2).reshape(out);
}

/// Transposed convolution with no padding: length (S-1)*s + d*(k-1) + 1 per spatial dim.
Tensor conv_transpose_full(const Tensor& x, const Tensor& w, const std::vector<int64_t>& stride,
                           const std::vector<int64_t>& dilation, int64_t groups) {
  const int64_t nsp = nsp_of(x);
  if (nsp == 2) {
    ops::ConvOptions o{stride, {0}, dilation, groups, false};
    return ops::conv_transpose2d(x, w, {}, o, {0});
  }
  if (nsp == 1) {  // as 2-D with a unit height
    ops::ConvOptions o{{1, stride[0]}, {0}, {1, dilation[0]}, groups, false};
    return ops::squeeze(ops::conv_transpose2d(ops::unsqueeze(x, 2), ops::unsqueeze(w, 2), {}, o, {0}), 2);
  }
  // No public 3-D transposed conv: a stride-1 conv of the zero-dilated input, padded by the
  // kernel span, with the flipped weight.
  std::vector<int64_t> span, axes;
  for (int64_t i = 0; i < nsp; ++i) span.push_back(dilation[i] * (ksize(w, i) - 1)), axes.push_back(i + 2);
  Tensor xd = pad_spatial(dilate(x, stride), span, span);
  return conv_plain(xd, ops::flip(swap_groups(w, groups), axes), std::vector<int64_t>(nsp, 1), dilation, groups);
}

/// The part [start, start + len) of each spatial dim of t, zeros where it lies outside t.
Tensor window(const Tensor& t, const std::vector<int64_t>& start, const Shape& len) {
  std::vector<int64_t> lo, hi;
  for (size_t i = 0; i < start.size(); ++i) {
    const int64_t F = t.shape()[i + 2];
    if (start[i] >= F || start[i] + len[i] <= 0) {  // no overlap: the window is all zeros
      Shape s = t.shape();
      for (size_t j = 0; j < len.size(); ++j) s[j + 2] = len[j];
      return ops::zeros(s, {t.dtype(), t.device()});
    }
    lo.push_back(-start[i]);
    hi.push_back(start[i] + len[i] - F);
  }
  return pad_spatial(t, lo, hi);
}

/// dW[o, c, k] = sum_n,j gout[n, o, j] * xin[n, group(o) * Cg + c, j*s + k*d] for a weight of
/// `wshape` (O, Cg, k...): a conv of xin (channels as batch) with gout (batch as channels),
/// where the stride and dilation trade places.
Tensor swapped_weight_grad(const Tensor& xin, const Tensor& gout, const Shape& wshape, const std::vector<int64_t>& stride,
                        const std::vector<int64_t>& dilation, int64_t groups) {
  const int64_t nsp = nsp_of(xin);
  const Dim N = xin.shape()[0], C = xin.shape()[1], O = gout.shape()[1], Cg = C / groups, Og = O / groups;
  std::vector<int64_t> zero(static_cast<size_t>(nsp), 0), need;
  for (int64_t i = 0; i < nsp; ++i)
    need.push_back(dilation[i] * (wshape[i + 2] - 1) + stride[i] * (gout.shape()[i + 2] - 1) + 1);
  Shape need_shape(need.begin(), need.end());
  Tensor xc = window(xin, zero, need_shape);  // drop the tail no output reads
  // xin (N, g, Cg, *) -> (Cg, g, N, *) -> (Cg, g*N, *); gout (N, g, Og, *) -> (g, Og, N, *) -> (O, N, *).
  Shape xs = {N, groups, Cg}, gs = {N, groups, Og};
  std::vector<int64_t> xperm = {2, 1, 0}, gperm = {1, 2, 0};
  Shape xflat = {Cg, groups * N}, gflat = {O, N};
  for (int64_t i = 0; i < nsp; ++i) {
    xs.push_back(need[i]), gs.push_back(gout.shape()[i + 2]);
    xperm.push_back(i + 3), gperm.push_back(i + 3);
    xflat.push_back(need[i]), gflat.push_back(gout.shape()[i + 2]);
  }
  Tensor xp = ops::permute(xc.reshape(xs), xperm).reshape(xflat);
  Tensor gp = ops::permute(gout.reshape(gs), gperm).reshape(gflat);
  Tensor r = conv_plain(xp, gp, dilation, stride, groups);  // (Cg, O, k...)
  return ops::transpose(r, 0, 1);
}

/// conv's weight gradient as one conv_weight_grad node (a broadcast cotangent is copied first:
/// oneDNN takes no stride-0 operand).
Tensor weight_grad_node(const prims::ConvWeightGradAttrs& a, const Tensor& x, const Tensor& dy) {
  return runtime::call(prims::conv_weight_grad_primitive(), a, {rules::gemm_operand(x), rules::gemm_operand(dy)});
}

/// Sum of a cotangent over every axis but the channel axis 1.
Tensor channel_sum(const Tensor& ct) {
  ops::Axes axes{0};
  for (int64_t i = 2; i < ct.dim(); ++i) axes.push_back(i);
  return ops::sum(ct, axes);
}

/// A bias tangent (O) broadcast over an output (N, O, *).
Tensor bias_tangent(const Tensor& tb, const Shape& out) {
  Shape s(out.size(), 1);
  s[1] = out[1];
  return ops::broadcast_to(tb.reshape(s), out);
}

// ---- conv ---------------------------------------------------------------------------------

Tensor conv_apply(const ConvAttrs& at, const Tensor& x, const Tensor& w) {
  if (at.pad_l == at.pad_r) return conv_plain(x, w, vec(at.stride), vec(at.dilation), at.groups, vec(at.pad_l));
  return conv_plain(pad_spatial(x, vec(at.pad_l), vec(at.pad_r)), w, vec(at.stride), vec(at.dilation), at.groups);
}

/// The cotangent of conv's x (shape xs) for the output cotangent ct. A 2-D conv with symmetric
/// padding is one conv_transpose2d of x's size (its output_padding recovers a tail no window
/// read): a single node, with no full-size result for a view to crop or a pad to copy.
/// Otherwise the full transposed conv covers the padded input from its start; the padding is
/// cut off (and zeros added for a tail that no window reached).
Tensor conv_data_grad(const ConvAttrs& at, const Tensor& ct, const Tensor& w, const Shape& xs) {
  const int64_t nsp = static_cast<int64_t>(xs.size()) - 2;
  if (nsp == 2 && at.pad_l == at.pad_r) {
    std::vector<int64_t> op;
    bool ok = true;
    for (int64_t i = 0; i < nsp && ok; ++i) {
      const int64_t s = at.stride[i], d = at.dilation[i], p = at.pad_l[i];
      const Dim S = xs[static_cast<size_t>(i) + 2], Q = ct.shape()[i + 2], k = w.shape()[i + 2];
      ok = !is_symbolic(S) && !is_symbolic(Q);
      const int64_t o = ok ? S - ((Q - 1) * s - 2 * p + d * (k - 1) + 1) : -1;
      ok = ok && o >= 0 && o < std::max(s, d);
      op.push_back(o);
    }
    if (ok) {
      ops::ConvOptions o{vec(at.stride), vec(at.pad_l), vec(at.dilation), at.groups, false};
      return ops::conv_transpose2d(ct, w, {}, o, op);
    }
  }
  Tensor full = conv_transpose_full(ct, w, vec(at.stride), vec(at.dilation), at.groups);
  return window(full, vec(at.pad_l), Shape(xs.begin() + 2, xs.end()));
}

void conv_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& at = *static_cast<const ConvAttrs*>(a.attrs);
  Tensor t;
  if (a.tangents[0].defined()) t = conv_apply(at, a.tangents[0], a.inputs[1]);
  if (a.tangents[1].defined()) rules::accumulate(t, conv_apply(at, a.inputs[0], a.tangents[1]));
  if (a.inputs.size() == 3 && a.tangents[2].defined())
    rules::accumulate(t, bias_tangent(a.tangents[2], a.outputs[0].shape()));
  out[0] = t;
}

void conv_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& at = *static_cast<const ConvAttrs*>(a.attrs);
  const Tensor& ct = a.cotangents[0];
  const Shape &xs = a.in_types[0].shape, &ws = a.in_types[1].shape;
  const int64_t nsp = static_cast<int64_t>(xs.size()) - 2;
  if (a.needs[0]) in[0] = conv_data_grad(at, ct, a.inputs[1], xs);
  if (a.needs[1]) {
    prims::ConvWeightGradAttrs wa{at.stride, at.pad_l, at.pad_r, at.dilation, {}, at.groups};
    for (int64_t i = 0; i < nsp; ++i) wa.kernel.push_back(ws[static_cast<size_t>(i) + 2]);
    in[1] = weight_grad_node(wa, a.inputs[0], ct);
  }
  if (a.needs.size() == 3 && a.needs[2]) in[2] = channel_sum(ct);
}

// ---- conv_weight_grad ---------------------------------------------------------------------
// Bilinear in (x, dy): its jvp is two more weight gradients; its vjp is the conv's other two
// products with the weight cotangent G in the weight's place: dx is the data gradient of
// conv(x, G) at dy, d(dy) is conv(x, G) itself.

void conv_weight_grad_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& at = *static_cast<const prims::ConvWeightGradAttrs*>(a.attrs);
  Tensor t;
  if (a.tangents[0].defined()) t = weight_grad_node(at, a.tangents[0], a.inputs[1]);
  if (a.tangents[1].defined()) rules::accumulate(t, weight_grad_node(at, a.inputs[0], a.tangents[1]));
  out[0] = t;
}

void conv_weight_grad_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& at = *static_cast<const prims::ConvWeightGradAttrs*>(a.attrs);
  const Tensor& g = a.cotangents[0];
  if (!g.defined()) return;
  const Shape& xs = a.in_types[0].shape;
  if (a.needs[0]) {
    Tensor full = conv_transpose_full(a.inputs[1], g, vec(at.stride), vec(at.dilation), at.groups);
    in[0] = window(full, vec(at.pad_l), Shape(xs.begin() + 2, xs.end()));
  }
  if (a.needs[1]) in[1] = conv_apply(at.conv(), a.inputs[0], g);
}

// ---- conv_transpose -----------------------------------------------------------------------

Tensor conv_transpose_apply(const ConvTransposeAttrs& at, const Tensor& x, const Tensor& w) {
  const int64_t nsp = nsp_of(x);
  if (nsp == 2) {
    ops::ConvOptions o{vec(at.stride), vec(at.padding), vec(at.dilation), at.groups, false};
    return ops::conv_transpose2d(x, w, {}, o, vec(at.output_padding));
  }
  Tensor full = conv_transpose_full(x, w, vec(at.stride), vec(at.dilation), at.groups);
  std::vector<int64_t> lo, hi;
  for (int64_t i = 0; i < nsp; ++i) lo.push_back(-at.padding[i]), hi.push_back(at.output_padding[i] - at.padding[i]);
  return pad_spatial(full, lo, hi);
}

void conv_transpose_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& at = *static_cast<const ConvTransposeAttrs*>(a.attrs);
  Tensor t;
  if (a.tangents[0].defined()) t = conv_transpose_apply(at, a.tangents[0], a.inputs[1]);
  if (a.tangents[1].defined()) rules::accumulate(t, conv_transpose_apply(at, a.inputs[0], a.tangents[1]));
  if (a.inputs.size() == 3 && a.tangents[2].defined())
    rules::accumulate(t, bias_tangent(a.tangents[2], a.outputs[0].shape()));
  out[0] = t;
}

void conv_transpose_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& at = *static_cast<const ConvTransposeAttrs*>(a.attrs);
  const Tensor& ct = a.cotangents[0];
  const Shape &xs = a.in_types[0].shape, &ws = a.in_types[1].shape;
  const int64_t nsp = static_cast<int64_t>(xs.size()) - 2;
  // The output is the full transposed conv cropped by `padding` on the left and extended by
  // output_padding - padding on the right: undo that to get ct on the full grid, whose
  // windows each input element wrote to.
  std::vector<int64_t> lo, hi;
  for (int64_t i = 0; i < nsp; ++i) lo.push_back(at.padding[i]), hi.push_back(at.padding[i] - at.output_padding[i]);
  const Tensor ctf = pad_spatial(ct, lo, hi);
  if (a.needs[0]) in[0] = conv_plain(ctf, a.inputs[1], vec(at.stride), vec(at.dilation), at.groups);
  if (a.needs[1]) in[1] = swapped_weight_grad(ctf, a.inputs[0], ws, vec(at.stride), vec(at.dilation), at.groups);
  if (a.needs.size() == 3 && a.needs[2]) in[2] = channel_sum(ct);
}

}  // namespace

void install_conv_rules() {
  def_rules(prims::conv_primitive(), {bit(0) | bit(1), 0}, conv_jvp, conv_vjp);
  def_rules(prims::conv_transpose_primitive(), {bit(0) | bit(1), 0}, conv_transpose_jvp, conv_transpose_vjp);
  def_rules(prims::conv_weight_grad_primitive(), {bit(0) | bit(1), 0}, conv_weight_grad_jvp, conv_weight_grad_vjp);
}

}  // namespace spore::autodiff
