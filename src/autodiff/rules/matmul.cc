// SPDX-License-Identifier: Apache-2.0
// Rules of matmul: C = alpha * op(a) @ op(b) + beta * bias over broadcast batch dims, where
// op() swaps the last two dims when trans_a / trans_b is set.
#include "autodiff/rules/nn_parts.h"
#include "prims/matmul.h"

namespace spore::autodiff {
namespace {

using prims::MatmulAttrs;
using rules::unbroadcast;

Tensor mT(const Tensor& x) { return ops::transpose(x, -2, -1); }
// op(x) for a transpose flag, and op(x)^T.
Tensor op_of(const Tensor& x, bool trans) { return trans ? mT(x) : x; }
Tensor op_t(const Tensor& x, bool trans) { return trans ? x : mT(x); }

Tensor scaled(const Tensor& t, double s) { return s == 1.0 ? t : t * s; }


// sum over the batch of A_i^T @ G_i for a b without batch dims: one GEMM over the flattened
// batch instead of a batched product summed afterwards (the Linear-layer weight gradient).
Tensor flat_at_g(const Tensor& A, const Tensor& G) {
  const Dim k = A.shape()[A.dim() - 1], n = G.shape()[G.dim() - 1];
  return ops::matmul(mT(A.reshape({-1, k})), G.reshape({-1, n}));
}

void matmul_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& at = *static_cast<const MatmulAttrs*>(a.attrs);
  Tensor t;
  if (a.tangents[0].defined())
    t = ops::matmul(op_of(rules::gemm_operand(a.tangents[0]), at.trans_a), op_of(a.inputs[1], at.trans_b));
  if (a.tangents[1].defined())
    rules::accumulate(
        t, ops::matmul(op_of(a.inputs[0], at.trans_a), op_of(rules::gemm_operand(a.tangents[1]), at.trans_b)));
  if (t.defined()) t = scaled(t, at.alpha);
  if (a.inputs.size() == 3 && a.tangents[2].defined() && at.beta != 0)
    rules::accumulate(t, scaled(a.tangents[2], at.beta));
  if (t.defined()) out[0] = rules::broadcast_tangent(t, a.outputs[0].shape());
}

void matmul_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& at = *static_cast<const MatmulAttrs*>(a.attrs);
  const Tensor ct = rules::gemm_operand(scaled(a.cotangents[0], at.alpha));
  const Tensor &x = a.inputs[0], &y = a.inputs[1];
  if (a.needs[0]) {
    // dA = ct @ B^T; with trans_a the input is A^T, so da = B @ ct^T.
    Tensor g = at.trans_a ? ops::matmul(op_of(y, at.trans_b), mT(ct)) : ops::matmul(ct, op_t(y, at.trans_b));
    in[0] = unbroadcast(g, a.in_types[0]);
  }
  if (a.needs[1]) {
    // dB = A^T @ ct; with trans_b the input is B^T, so db = ct^T @ A.
    const Tensor A = op_of(x, at.trans_a);
    Tensor g;
    if (y.dim() == 2 && ct.dim() > 2 && x.dim() == ct.dim()) g = flat_at_g(A, ct);
    else g = ops::matmul(mT(A), ct);
    if (at.trans_b) g = mT(g);
    in[1] = unbroadcast(g, a.in_types[1]);
  }
  if (a.needs.size() == 3 && a.needs[2] && at.beta != 0)
    in[2] = unbroadcast(scaled(a.cotangents[0], at.beta), a.in_types[2]);
}

}  // namespace

void install_matmul_rules() { def_rules(prims::matmul_primitive(), {bit(0) | bit(1), 0}, matmul_jvp, matmul_vjp); }

}  // namespace spore::autodiff
