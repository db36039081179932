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

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal,
                                    std::optional<double> scale) {
  const char* op = "scaled_dot_product_attention";
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
  const double s = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(E));
  Tensor scores = matmul(q, transpose(k, -2, -1)) * s;
  const Tensor neg_inf = weak_scalar(-INFINITY);
  if (causal) {
    // Keep key j for query i when j <= i (PyTorch's lower-triangular is_causal mask).
    const Tensor keep = greater_equal(unsqueeze(arange(L), 1), unsqueeze(arange(S), 0));
    scores = where(keep, scores, neg_inf);
  }
  if (mask.defined()) {
    if (mask.dtype() == DType::Bool) {
      scores = where(mask, scores, neg_inf);
    } else {
      SPORE_CHECK(is_floating(mask.dtype()), "[", op, "] mask must be bool (true = attend) or an additive float mask, got ",
                  dtype_name(mask.dtype()));
      scores = scores + mask;
    }
  }
  return matmul(softmax(scores, -1), v);
}

}  // namespace spore::ops
