// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of cumsum and cumprod, written with the public scans so they differentiate
// again (cumprod's rules call cumprod and cumsum, whose rules are these).
#include "autodiff/rules/reduction_parts.h"
#include "prims/scan.h"

namespace spore::autodiff {
namespace {

using prims::ScanAttrs;
using rules::weak;

/// out[i] = sum of v[j] for j >= i along `axis` (the transpose of cumsum).
Tensor reverse_cumsum(const Tensor& v, int64_t axis) {
  return ops::flip(ops::cumsum(ops::flip(v, {axis}), axis), {axis});
}

void cumsum_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (a.tangents[0].defined()) out[0] = ops::cumsum(a.tangents[0], static_cast<const ScanAttrs*>(a.attrs)->axis);
}
void cumsum_vjp(const VjpArgs& a, std::span<Tensor> in) {
  in[0] = reverse_cumsum(a.cotangents[0], static_cast<const ScanAttrs*>(a.attrs)->axis);
}

// cumprod: y_i = prod_{k <= i} x_k. Along a line let z be the first zero of x (if any):
//  - before z (no zero at or before j), dy_i/dx_j = y_i / x_j for i >= j (y_i = 0 from z on);
//  - at z, dy_i/dx_z = y'_i for i >= z, where y' = cumprod(x with x_z set to 1);
//  - after z, every y_i that depends on x_j also holds x_z = 0, so the derivative is 0.
// No division touches a zero, so no NaN; without zeros this is the usual y * cumsum(t / x), exact
// to every order. With zeros the masks are held constant (exact to first order), as PyTorch.
struct CumprodParts {
  Tensor before;  // bool: no zero at or before this position
  Tensor first;   // bool: the first zero of its line
  Tensor x_safe;  // x with zeros set to 1
  Tensor y1;      // cumprod of x with its first zero set to 1
};
CumprodParts cumprod_parts(const Tensor& x, int64_t axis) {
  const Tensor is_zero = ops::equal(x, weak(0));
  const Tensor zeros_so_far = ops::cumsum(is_zero.to(x.dtype()), axis);
  CumprodParts p;
  p.before = ops::equal(zeros_so_far, weak(0));
  p.first = ops::logical_and(is_zero, ops::equal(zeros_so_far, weak(1)));
  p.x_safe = ops::where(is_zero, weak(1), x);
  p.y1 = ops::cumprod(ops::where(p.first, weak(1), x), axis);
  return p;
}

void cumprod_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (!a.tangents[0].defined()) return;
  const int64_t axis = static_cast<const ScanAttrs*>(a.attrs)->axis;
  const Tensor& t = a.tangents[0];
  const CumprodParts p = cumprod_parts(a.inputs[0], axis);
  const Tensor t_at_zero = ops::cumsum(ops::where(p.first, t, weak(0)), axis);  // t_z from z on
  out[0] = ops::where(p.before, a.outputs[0] * ops::cumsum(t / p.x_safe, axis), t_at_zero * p.y1);
}
void cumprod_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const int64_t axis = static_cast<const ScanAttrs*>(a.attrs)->axis;
  const Tensor& ct = a.cotangents[0];
  const CumprodParts p = cumprod_parts(a.inputs[0], axis);
  const Tensor g_before = reverse_cumsum(ct * a.outputs[0], axis) / p.x_safe;
  const Tensor g_first = reverse_cumsum(ct * p.y1, axis);
  in[0] = ops::where(p.before, g_before, ops::where(p.first, g_first, weak(0)));
}

}  // namespace

void install_scan_rules() {
  def_rules("cumsum", {}, cumsum_jvp, cumsum_vjp);
  def_rules("cumprod", {bit(0), bit(0)}, cumprod_jvp, cumprod_vjp);
}

}  // namespace spore::autodiff
