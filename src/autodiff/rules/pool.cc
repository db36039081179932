// SPDX-License-Identifier: Apache-2.0
// Rules of pool2d (max, avg) and adaptive_avg_pool2d. Each is linear in the input given the
// window choice, so the jvp reapplies the pooling (max: gathers the tangent at the argmax)
// and the vjp is the transposed linear map: a scatter-add at the argmax for max, a
// transposed convolution with a ones kernel for avg, and separable averaging matrices for the
// adaptive pool.
#include <vector>

#include "autodiff/rules/nn_parts.h"
#include "prims/pool.h"

namespace spore::autodiff {
namespace {

using prims::Pool2dAttrs;
using prims::PoolKind;

ops::PoolOptions options_of(const Pool2dAttrs& at) {
  ops::PoolOptions o;
  o.kernel = {at.kernel[0], at.kernel[1]};
  o.stride = {at.stride[0], at.stride[1]};
  o.padding = {at.padding[0], at.padding[1]};
  o.ceil_mode = at.ceil_mode;
  o.count_include_pad = at.count_include_pad;
  return o;
}

/// A constant (rows, cols) matrix in dtype `dt`.
Tensor matrix(const std::vector<double>& v, Dim rows, Dim cols, DType dt) {
  return ops::from_vector(v, {rows, cols}).to(dt);
}

// ---- max ----------------------------------------------------------------------------------

/// Flat argmax (h * W + w) of each window: the primitive's own second output when it made
/// one, else the same pooling run again for its indices (ties resolve as in the forward).
Tensor argmax_of(const Pool2dAttrs& at, const Tensor& x, std::span<const Tensor> outputs) {
  if (at.with_indices && outputs.size() > 1 && outputs[1].defined()) return outputs[1];
  return ops::max_pool2d_with_indices(x, options_of(at)).second;
}

/// (N, C, H, W) -> (N, C, H*W), the layout the flat indices address.
Tensor planes(const Tensor& t) {
  const Shape& s = t.shape();
  return t.reshape({s[0], s[1], s[2] * s[3]});
}

// ---- avg ----------------------------------------------------------------------------------

/// 1 / (window size) for each output position of one dim, as the kernel counts it.
std::vector<double> inv_counts(int64_t in, int64_t out, int64_t k, int64_t s, int64_t p, bool include_pad) {
  std::vector<double> r(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    int64_t a = o * s - p, b = std::min(a + k, in + p);
    if (!include_pad) a = std::max<int64_t>(a, 0), b = std::min(b, in);
    r[o] = 1.0 / static_cast<double>(b - a);
  }
  return r;
}

/// Spreads g (N, C, OH, OW), already divided by the window sizes, back over each window of
/// an (N, C, H, W) input: a depthwise transposed conv with a ones kernel (oneDNN's depthwise
/// path is ~10x faster than planes as a batch of one channel), then the padding cut off.
Tensor spread_windows(const Tensor& g, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                      Dim H, Dim W) {
  const Dim C = g.shape()[1];
  Tensor one = ops::ones({C, 1, kh, kw}, {g.dtype(), g.device()});
  ops::ConvOptions o{{sh, sw}, {0}, {1}, C, false};
  Tensor full = ops::conv_transpose2d(g, one, {}, o, {0});
  const Dim FH = full.shape()[2], FW = full.shape()[3];
  // Full covers the padded input from its start; a ceil_mode tail may end before or after it.
  return ops::pad(full, {-pw, W + pw - FW, -ph, H + ph - FH});
}

void pool_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& at = *static_cast<const Pool2dAttrs*>(a.attrs);
  const Tensor& t = a.tangents[0];
  if (!t.defined()) return;
  if (at.kind == PoolKind::Avg) {
    out[0] = ops::avg_pool2d(t, options_of(at));
    return;
  }
  const Tensor idx = argmax_of(at, a.inputs[0], a.outputs);
  out[0] = ops::gather(planes(t), 2, planes(idx)).reshape(a.outputs[0].shape());
}

void pool_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& at = *static_cast<const Pool2dAttrs*>(a.attrs);
  const Tensor& ct = a.cotangents[0];
  const TensorType& xt = a.in_types[0];
  const Dim H = xt.shape[2], W = xt.shape[3], OH = ct.shape()[2], OW = ct.shape()[3];
  if (at.kind == PoolKind::Max) {
    // Overlapping windows may pick the same element: scatter_add sums their cotangents.
    const Tensor idx = argmax_of(at, a.inputs[0], a.outputs);
    Tensor z = ops::zeros({xt.shape[0], xt.shape[1], H * W}, {xt.dtype, ct.device()});
    in[0] = ops::scatter_add(z, 2, planes(idx), planes(ct)).reshape(xt.shape);
    return;
  }
  const auto rh = inv_counts(H, OH, at.kernel[0], at.stride[0], at.padding[0], at.count_include_pad);
  const auto rw = inv_counts(W, OW, at.kernel[1], at.stride[1], at.padding[1], at.count_include_pad);
  std::vector<double> inv(static_cast<size_t>(OH * OW));
  for (Dim i = 0; i < OH; ++i)
    for (Dim j = 0; j < OW; ++j) inv[i * OW + j] = rh[i] * rw[j];
  in[0] = spread_windows(ct * matrix(inv, OH, OW, ct.dtype()), at.kernel[0], at.kernel[1], at.stride[0], at.stride[1],
                         at.padding[0], at.padding[1], H, W);
}

// ---- adaptive avg -------------------------------------------------------------------------

/// (out, in) averaging matrix of one dim: row i holds 1/len over [floor(i*in/out), ceil((i+1)*in/out)).
std::vector<double> adaptive_matrix(int64_t in, int64_t out) {
  std::vector<double> m(static_cast<size_t>(in * out), 0.0);
  for (int64_t o = 0; o < out; ++o) {
    const int64_t a = o * in / out, b = ((o + 1) * in + out - 1) / out;
    for (int64_t i = a; i < b; ++i) m[o * in + i] = 1.0 / static_cast<double>(b - a);
  }
  return m;
}

void adaptive_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (!a.tangents[0].defined()) return;
  const Shape& s = a.outputs[0].shape();
  out[0] = ops::adaptive_avg_pool2d(a.tangents[0], {s[2], s[3]});
}

void adaptive_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const Tensor& ct = a.cotangents[0];
  const Shape& xs = a.in_types[0].shape;
  const Dim H = xs[2], W = xs[3], OH = ct.shape()[2], OW = ct.shape()[3];
  if (H % OH == 0 && W % OW == 0) {
    // Equal, disjoint windows (global pooling included): broadcast each cotangent over its block.
    const Dim kh = H / OH, kw = W / OW;
    const Shape& c = ct.shape();
    Tensor g = ops::broadcast_to(ct.reshape({c[0], c[1], OH, 1, OW, 1}), {c[0], c[1], OH, kh, OW, kw});
    in[0] = g.reshape(xs) * (1.0 / static_cast<double>(kh * kw));
    return;
  }
  // Overlapping windows of unequal sizes: dx = Ah^T @ ct @ Aw with the averaging matrices.
  const Tensor aht = ops::transpose(matrix(adaptive_matrix(H, OH), OH, H, ct.dtype()), 0, 1);
  const Tensor aw = matrix(adaptive_matrix(W, OW), OW, W, ct.dtype());
  in[0] = ops::matmul(ops::matmul(aht, rules::gemm_operand(ct)), aw);
}

}  // namespace

void install_pool_rules() {
  // Max needs x (to recompute the argmax when the forward kept no indices) or its indices.
  def_rules(prims::pool2d_primitive(), {bit(0), bit(1)}, pool_jvp, pool_vjp);
  def_rules(prims::adaptive_avg_pool2d_primitive(), {}, adaptive_jvp, adaptive_vjp);
}

}  // namespace spore::autodiff
