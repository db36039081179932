// SPDX-License-Identifier: Apache-2.0
// Rules of embedding: a row gather, so the jvp gathers the tangent's rows and the vjp
// scatter-adds cotangent rows into a zero table (repeated indices sum).
#include "autodiff/rules/nn_parts.h"
#include "prims/embedding.h"
#include "prims/layer_norm.h"

namespace spore::autodiff {
namespace {

void embedding_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (a.tangents[0].defined()) out[0] = ops::embedding(a.tangents[0], a.inputs[1]);
}

void embedding_vjp(const VjpArgs& a, std::span<Tensor> in) {
  if (!a.needs[0]) return;
  const TensorType& wt = a.in_types[0];
  const Dim V = wt.shape[0], D = wt.shape[1];
  const Tensor& idx = a.inputs[1];
  const Dim n = idx.numel();
  // 16-bit tables accumulate repeated rows in float32 and round once.
  const DType acc = prims::stats_dtype(wt.dtype);
  Tensor rows = a.cotangents[0].to(acc).reshape({n, D});
  Tensor where = ops::broadcast_to(idx.reshape({n, 1}), {n, D});
  Tensor z = ops::zeros({V, D}, {acc, rows.device()});
  in[0] = ops::scatter_add(z, 0, where, rows).to(wt.dtype);
}

}  // namespace

void install_embedding_rules() {
  def_rules(prims::embedding_primitive(), {bit(1), 0}, embedding_jvp, embedding_vjp);
}

}  // namespace spore::autodiff
