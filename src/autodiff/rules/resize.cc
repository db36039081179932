// SPDX-License-Identifier: Apache-2.0
// Rules of interpolate (nearest, bilinear). The resize is linear and separable: y = Mh x Mw^T
// per plane, with Mh (out_h, H) and Mw (out_w, W) holding the kernel's own source indices and
// weights. The jvp reapplies the primitive; the vjp is Mh^T ct Mw, except for nearest with an
// integer scale, where it is a block sum.
#include <cmath>
#include <vector>

#include "autodiff/rules/nn_parts.h"
#include "prims/interpolate.h"
#include "prims/layer_norm.h"

namespace spore::autodiff {
namespace {

using prims::InterpolateAttrs;

// The kernel's bilinear table (prims/interpolate.h) as rows of a dense matrix.
template <class Cm>
void add_linear(std::vector<double>& m, int64_t in, int64_t out, bool align) {
  const auto t = prims::linear_table<Cm>(in, out, align);
  for (int64_t d = 0; d < out; ++d) {
    m[d * in + t[d].i0] += static_cast<double>(t[d].l0);
    m[d * in + t[d].i1] += static_cast<double>(t[d].l1);
  }
}

/// The (out, in) resize matrix of one dim.
std::vector<double> resize_matrix(const InterpolateAttrs& at, int64_t in, int64_t out, DType dt) {
  std::vector<double> m(static_cast<size_t>(in * out), 0.0);
  if (!at.bilinear) {
    for (int64_t d = 0; d < out; ++d) m[d * in + prims::nearest_src(d, in, out)] = 1.0;
  } else if (dt == DType::Float64) {
    add_linear<double>(m, in, out, at.align_corners);
  } else {
    add_linear<float>(m, in, out, at.align_corners);
  }
  return m;
}

/// k when nearest maps each output index d to d / k (an integer upscale), else 0.
int64_t repeat_factor(int64_t in, int64_t out) {
  if (out % in != 0) return 0;
  const int64_t k = out / in;
  for (int64_t d = 0; d < out; ++d)
    if (prims::nearest_src(d, in, out) != d / k) return 0;
  return k;
}

void interpolate_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& at = *static_cast<const InterpolateAttrs*>(a.attrs);
  if (!a.tangents[0].defined()) return;
  out[0] = ops::interpolate(a.tangents[0], {at.out_h, at.out_w},
                            at.bilinear ? ops::InterpolateMode::Bilinear : ops::InterpolateMode::Nearest,
                            at.align_corners);
}

void interpolate_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& at = *static_cast<const InterpolateAttrs*>(a.attrs);
  const Tensor& ct = a.cotangents[0];
  const TensorType& xt = a.in_types[0];
  const Dim N = xt.shape[0], C = xt.shape[1], H = xt.shape[2], W = xt.shape[3];
  if (!at.bilinear) {
    const int64_t kh = repeat_factor(H, at.out_h), kw = repeat_factor(W, at.out_w);
    if (kh > 0 && kw > 0) {  // each input element fed a kh x kw block
      in[0] = ops::sum(ct.reshape({N, C, H, kh, W, kw}), {3, 5});
      return;
    }
  }
  // Matrices and products in the statistics dtype (float32 for 16-bit cotangents).
  const DType cdt = prims::stats_dtype(xt.dtype);
  const auto mh = resize_matrix(at, H, at.out_h, xt.dtype), mw = resize_matrix(at, W, at.out_w, xt.dtype);
  const Tensor mht = ops::transpose(ops::from_vector(mh, {at.out_h, H}).to(cdt), 0, 1);
  const Tensor mwm = ops::from_vector(mw, {at.out_w, W}).to(cdt);
  in[0] = ops::matmul(ops::matmul(mht, rules::gemm_operand(ct.to(cdt))), mwm).to(xt.dtype);
}

}  // namespace

void install_resize_rules() {
  def_rules(prims::interpolate_primitive(), {}, interpolate_jvp, interpolate_vjp);
}

}  // namespace spore::autodiff
