// SPDX-License-Identifier: Apache-2.0
// scaled_dot_product_attention as a composite of public ops: matmul, the softmax primitive and
// where for masks. A fused kernel (online softmax inside the matmul tiles) can come later as a
// primitive with this function as its decomposition.
#include <cmath>

#include "ops/nn_checks.h"
#include "spore/ops/creation.h"
#include "spore/ops/elementwise.h"
#include "spore/ops/linalg.h"
#include "spore/ops/nn.h"
#include "spore/ops/shape.h"

namespace spore::ops {
namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

// (batch..., L, S): q's and k's batch dims broadcast, as the q @ k^T matmul will.
Shape scores_shape(const Tensor& q, const Tensor& k) {
  const Shape qb(q.shape().begin(), q.shape().end() - 2), kb(k.shape().begin(), k.shape().end() - 2);
  Shape s = broadcast_shapes(qb, kb, kOp);
  s.push_back(q.shape()[q.dim() - 2]);
  s.push_back(k.shape()[k.dim() - 2]);
  return s;
}

// Checked before any work so a bad mask is reported against the op, not the add or where
// inside it; like PyTorch's in-place add the mask may not enlarge the scores' shape.
void check_mask(const Tensor& mask, const Shape& scores) {
  SPORE_CHECK(mask.dtype() == DType::Bool || is_floating(mask.dtype()), "[", kOp,
              "] mask must be bool (true = attend) or an additive float mask, got ", dtype_name(mask.dtype()));
  const Shape& m = mask.shape();
  bool ok = m.size() <= scores.size();
  for (size_t i = 0; ok && i < m.size(); ++i) {
    const Dim md = m[m.size() - 1 - i], sd = scores[scores.size() - 1 - i];
    ok = md == sd || md == 1;
  }
  SPORE_CHECK(ok, "[", kOp, "] mask shape ", shape_str(m), " does not broadcast to the attention scores shape ",
              shape_str(scores), " (batch..., L, S); give the mask those trailing dims, or 1 to broadcast");
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal,
                                    std::optional<double> scale) {
  const char* op = kOp;
  nn_detail::check_float(op, q);
  nn_detail::check_float(op, k);
  nn_detail::check_float(op, v);
  SPORE_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, "[", op, "] q, k and v need rank >= 2 (..., L, E), got ",
              shape_str(q.shape()), ", ", shape_str(k.shape()), " and ", shape_str(v.shape()));
  SPORE_CHECK(q.shape()[q.dim() - 1] == k.shape()[k.dim() - 1], "[", op, "] q ", shape_str(q.shape()), " and k ",
              shape_str(k.shape()), " differ in the last (embedding) dim");
  SPORE_CHECK(k.shape()[k.dim() - 2] == v.shape()[v.dim() - 2], "[", op, "] k ", shape_str(k.shape()), " and v ",
              shape_str(v.shape()), " differ in the source length (dim -2)");
  const int64_t L = q.shape()[q.dim() - 2], S = k.shape()[k.dim() - 2], E = q.shape()[q.dim() - 1];
  const Shape scores_s = scores_shape(q, k);  // also names this op if q and k do not broadcast
  if (mask.defined()) check_mask(mask, scores_s);
  const double s = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(E));
  Tensor scores = matmul(q, transpose(k, -2, -1)) * s;
  const Tensor neg_inf = weak_scalar(-INFINITY);
  if (causal) {
    // Keep key j for query i when j <= i (PyTorch's lower-triangular is_causal mask).
    const Tensor keep = greater_equal(unsqueeze(arange(L), 1), unsqueeze(arange(S), 0));
    scores = where(keep, scores, neg_inf);
  }
  if (mask.defined()) {
    scores = mask.dtype() == DType::Bool ? where(mask, scores, neg_inf) : scores + mask;
  }
  return matmul(softmax(scores, -1), v);
}

}  // namespace spore::ops
