// SPDX-License-Identifier: Apache-2.0
// Public linear-algebra ops: matmul (numpy semantics), addmm, outer. einsum is in einsum.cc.
#include "spore/ops/linalg.h"

#include "ops/promote.h"
#include "prims/matmul.h"
#include "runtime/dispatch.h"
#include "spore/ops/elementwise.h"
#include "spore/ops/shape.h"

namespace spore::ops {
namespace {

DType matmul_type(const char* op, std::initializer_list<const Tensor*> xs) {
  for (const Tensor* x : xs) SPORE_CHECK(x->defined(), "[", op, "] an input is an undefined tensor");
  DType t = result_type(xs);
  SPORE_CHECK(t != DType::Bool, "[", op, "] is not defined for bool tensors; cast them to a number dtype first");
  return t;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  DType t = matmul_type("matmul", {&a, &b});
  SPORE_CHECK(a.dim() >= 1 && b.dim() >= 1, "[matmul] needs inputs of rank >= 1, got a ", shape_str(a.shape()),
              " and b ", shape_str(b.shape()), "; use mul for scalars");
  const Dim ka = a.shape()[a.dim() - 1], kb = b.dim() == 1 ? b.shape()[0] : b.shape()[b.dim() - 2];
  SPORE_CHECK(ka == kb, "[matmul] inner dimensions differ: a is ", shape_str(a.shape()), ", b is ",
              shape_str(b.shape()), "; transpose b or fix its shape");
  // numpy: a 1-D a becomes a row (1, K), a 1-D b a column (K, 1); the added dim is dropped.
  Tensor a2 = a.dim() == 1 ? unsqueeze(a, 0) : a;
  Tensor b2 = b.dim() == 1 ? unsqueeze(b, 1) : b;
  Tensor c = runtime::call(prims::matmul_primitive(), prims::MatmulAttrs{}, {to_dtype(a2, t), to_dtype(b2, t)});
  if (b.dim() == 1) c = squeeze(c, -1);
  if (a.dim() == 1) c = squeeze(c, -2 + (b.dim() == 1 ? 1 : 0));
  return c;
}

Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, double beta, double alpha) {
  DType t = matmul_type("addmm", {&bias, &a, &b});
  SPORE_CHECK(a.dim() == 2 && b.dim() == 2, "[addmm] needs 2-D a and b, got a ", shape_str(a.shape()), " and b ",
              shape_str(b.shape()), "; use matmul for batches");
  SPORE_CHECK(a.shape()[1] == b.shape()[0], "[addmm] inner dimensions differ: a is ", shape_str(a.shape()),
              ", b is ", shape_str(b.shape()), "; transpose b or fix its shape");
  SPORE_CHECK(bias.dim() <= 2, "[addmm] bias must have rank <= 2, got ", shape_str(bias.shape()));
  return runtime::call(prims::matmul_primitive(), prims::MatmulAttrs{false, false, alpha, beta},
                       {to_dtype(a, t), to_dtype(b, t), to_dtype(bias, t)});
}

Tensor outer(const Tensor& a, const Tensor& b) {
  SPORE_CHECK(a.defined() && b.defined(), "[outer] an input is an undefined tensor");
  SPORE_CHECK(a.dim() == 1 && b.dim() == 1, "[outer] needs 1-D inputs, got ", shape_str(a.shape()), " and ",
              shape_str(b.shape()));
  // A broadcast product is exact, like a K=1 GEMM, and works for every dtype including bool.
  return mul(unsqueeze(a, 1), unsqueeze(b, 0));
}

}  // namespace spore::ops
