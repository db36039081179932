// SPDX-License-Identifier: Apache-2.0
#pragma once
// Argument checks shared by the public nn ops (nn.cc, loss.cc, attention.cc, nn_index.cc).
#include <vector>

#include "ops/promote.h"
#include "spore/tensor.h"

namespace spore::ops::nn_detail {

/// Throws unless x is defined and floating.
inline void check_float(const char* op, const Tensor& x) {
  SPORE_CHECK(x.defined(), "[", op, "] input is an undefined tensor");
  SPORE_CHECK(is_floating(x.dtype()), "[", op, "] needs a floating input, got ", dtype_name(x.dtype()),
              "; cast it to float32 first");
}

/// Throws unless an optional parameter (weight, bias, running stats) is undefined or has `shape`
/// and x's dtype.
inline void check_param(const char* op, const char* what, const Tensor& p, const Tensor& x, const Shape& shape) {
  if (!p.defined()) return;
  SPORE_CHECK(p.shape() == shape, "[", op, "] ", what, " has shape ", shape_str(p.shape()), " but input shape ",
              shape_str(x.shape()), " needs ", shape_str(shape));
  SPORE_CHECK(p.dtype() == x.dtype(), "[", op, "] ", what, " is ", dtype_name(p.dtype()), " but the input is ",
              dtype_name(x.dtype()), "; cast ", what, " to ", dtype_name(x.dtype()));
}

/// x followed by the defined optional tensors.
inline std::vector<Tensor> inputs(const Tensor& x, const Tensor& a = {}, const Tensor& b = {}, const Tensor& c = {},
                                  const Tensor& d = {}) {
  std::vector<Tensor> v{x};
  for (const Tensor* t : {&a, &b, &c, &d})
    if (t->defined()) v.push_back(*t);
  return v;
}

}  // namespace spore::ops::nn_detail
