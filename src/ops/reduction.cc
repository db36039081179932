// SPDX-License-Identifier: Apache-2.0
// Public reduction ops: resolve and check axes, apply PyTorch's dtype rules, then call the
// reduction, arg-reduction and scan primitives (src/prims/reduce.h, scan.h).
#include "spore/ops/reduction.h"

#include <algorithm>
#include <cmath>

#include "ops/promote.h"
#include "prims/reduce.h"
#include "prims/scan.h"
#include "runtime/dispatch.h"
#include "spore/ops/shape.h"

namespace spore::ops {

using prims::ReduceAttrs;
using prims::ReduceOp;

namespace {

std::string axes_str(const Axes& axes) {
  std::string s = "[";
  for (size_t i = 0; i < axes.size(); ++i) s += (i ? ", " : "") + std::to_string(axes[i]);
  return s + "]";
}

/// Normalized, sorted axes; empty means every axis. A 0-d tensor accepts axis 0 / -1 and
/// reduces nothing, as in PyTorch.
ReduceAttrs resolve(const char* op, const Tensor& x, const Axes& axes, bool keepdims) {
  SPORE_CHECK(x.defined(), "[", op, "] input is an undefined tensor");
  ReduceAttrs a;
  a.keepdims = keepdims;
  const int64_t rank = x.dim();
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) a.axes.push_back(d);
    return a;
  }
  for (int64_t ax : axes) {
    const int64_t d = normalize_axis(ax, rank, op);
    if (rank == 0) continue;
    SPORE_CHECK(std::find(a.axes.begin(), a.axes.end(), d) == a.axes.end(), "[", op, "] axis ", d,
                " appears more than once in axes ", axes_str(axes), "; list each axis once");
    a.axes.push_back(d);
  }
  std::sort(a.axes.begin(), a.axes.end());
  return a;
}

void check_floating(const char* op, const Tensor& x) {
  SPORE_CHECK(is_floating(x.dtype()), "[", op, "] needs a floating-point tensor, got ", dtype_name(x.dtype()),
              "; convert first, e.g. ", op, "(x.to(DType::Float32))");
}

/// max/min-like reductions have no identity: reducing an empty extent into a non-empty
/// result is an error (PyTorch's rule).
void check_nonempty(const char* op, const Tensor& x, const ReduceAttrs& a) {
  int64_t r = 1, m = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    (std::find(a.axes.begin(), a.axes.end(), d) != a.axes.end() ? r : m) *= x.shape()[d];
  SPORE_CHECK(r > 0 || m == 0, "[", op, "] cannot reduce over a zero-size extent: input shape ",
              shape_str(x.shape()), ", axes ", axes_str(Axes(a.axes.begin(), a.axes.end())), "; ", op,
              " has no identity, so reduce over non-empty axes (or check the input is non-empty)");
}

Tensor reduce(ReduceOp op, const Tensor& x, const ReduceAttrs& a) {
  return runtime::call(prims::reduce_primitive(op), a, {x});
}

}  // namespace

Tensor sum(const Tensor& x, const Axes& axes, bool keepdims) {
  return reduce(ReduceOp::Sum, x, resolve("sum", x, axes, keepdims));
}

Tensor mean(const Tensor& x, const Axes& axes, bool keepdims) {
  ReduceAttrs a = resolve("mean", x, axes, keepdims);
  check_floating("mean", x);
  return reduce(ReduceOp::Mean, x, a);
}

Tensor prod(const Tensor& x, const Axes& axes, bool keepdims) {
  return reduce(ReduceOp::Prod, x, resolve("prod", x, axes, keepdims));
}

Tensor amax(const Tensor& x, const Axes& axes, bool keepdims) {
  ReduceAttrs a = resolve("amax", x, axes, keepdims);
  check_nonempty("amax", x, a);
  return reduce(ReduceOp::Max, x, a);
}

Tensor amin(const Tensor& x, const Axes& axes, bool keepdims) {
  ReduceAttrs a = resolve("amin", x, axes, keepdims);
  check_nonempty("amin", x, a);
  return reduce(ReduceOp::Min, x, a);
}

Tensor all(const Tensor& x, const Axes& axes, bool keepdims) {
  return reduce(ReduceOp::All, x, resolve("all", x, axes, keepdims));
}

Tensor any(const Tensor& x, const Axes& axes, bool keepdims) {
  return reduce(ReduceOp::Any, x, resolve("any", x, axes, keepdims));
}

namespace {
Tensor var_like(ReduceOp op, const char* name, const Tensor& x, const Axes& axes, int64_t correction,
                bool keepdims) {
  ReduceAttrs a = resolve(name, x, axes, keepdims);
  check_floating(name, x);
  SPORE_CHECK(correction >= 0, "[", name, "] correction must be >= 0, got ", correction);
  a.correction = correction;
  return reduce(op, x, a);
}

Tensor arg_reduce(bool max, const char* name, const Tensor& x, int64_t axis, bool keepdims) {
  SPORE_CHECK(x.defined(), "[", name, "] input is an undefined tensor");
  SPORE_CHECK(x.dtype() != DType::Bool, "[", name, "] is not defined for bool tensors (as in PyTorch); ",
              "cast to an integer dtype first");
  const int64_t d = normalize_axis(axis, x.dim(), name);
  prims::ArgReduceAttrs a{x.dim() == 0 ? 0 : d, keepdims};
  if (x.dim() > 0) {
    bool empty_out = false;
    for (int64_t i = 0; i < x.dim(); ++i) empty_out |= i != d && x.shape()[i] == 0;
    SPORE_CHECK(x.shape()[d] > 0 || empty_out, "[", name, "] cannot take the ", name, " of axis ", axis,
                " of shape ", shape_str(x.shape()), ": it has size 0; pass a non-empty axis");
  }
  return runtime::call(prims::arg_reduce_primitive(max), a, {x});
}
}  // namespace

Tensor var(const Tensor& x, const Axes& axes, int64_t correction, bool keepdims) {
  return var_like(ReduceOp::Var, "var", x, axes, correction, keepdims);
}

Tensor std(const Tensor& x, const Axes& axes, int64_t correction, bool keepdims) {
  return var_like(ReduceOp::Std, "std", x, axes, correction, keepdims);
}

Tensor argmax(const Tensor& x, int64_t axis, bool keepdims) { return arg_reduce(true, "argmax", x, axis, keepdims); }
Tensor argmin(const Tensor& x, int64_t axis, bool keepdims) { return arg_reduce(false, "argmin", x, axis, keepdims); }

Tensor argmax(const Tensor& x) {
  SPORE_CHECK(x.defined(), "[argmax] input is an undefined tensor");
  SPORE_CHECK(x.numel() > 0, "[argmax] cannot take the argmax of an empty tensor of shape ", shape_str(x.shape()),
              "; pass a non-empty tensor");
  // A 0-d tensor is its own flattening (and reshape of 0-d to (-1,) is not relied on).
  return arg_reduce(true, "argmax", x.dim() == 0 ? x : reshape(x, {-1}), 0, false);
}

Tensor argmin(const Tensor& x) {
  SPORE_CHECK(x.defined(), "[argmin] input is an undefined tensor");
  SPORE_CHECK(x.numel() > 0, "[argmin] cannot take the argmin of an empty tensor of shape ", shape_str(x.shape()),
              "; pass a non-empty tensor");
  // A 0-d tensor is its own flattening (and reshape of 0-d to (-1,) is not relied on).
  return arg_reduce(false, "argmin", x.dim() == 0 ? x : reshape(x, {-1}), 0, false);
}

Tensor logsumexp(const Tensor& x, const Axes& axes, bool keepdims) {
  ReduceAttrs a = resolve("logsumexp", x, axes, keepdims);
  // Integers and bool compute in float32, as PyTorch.
  return reduce(ReduceOp::LogSumExp, to_dtype(x, float_type(x.dtype())), a);
}

Tensor cumsum(const Tensor& x, int64_t axis) {
  SPORE_CHECK(x.defined(), "[cumsum] input is an undefined tensor");
  const int64_t d = normalize_axis(axis, x.dim(), "cumsum");
  return runtime::call(prims::scan_primitive(false), prims::ScanAttrs{x.dim() == 0 ? 0 : d}, {x});
}

Tensor cumprod(const Tensor& x, int64_t axis) {
  SPORE_CHECK(x.defined(), "[cumprod] input is an undefined tensor");
  const int64_t d = normalize_axis(axis, x.dim(), "cumprod");
  return runtime::call(prims::scan_primitive(true), prims::ScanAttrs{x.dim() == 0 ? 0 : d}, {x});
}

Tensor norm(const Tensor& x, double p, const Axes& axes, bool keepdims) {
  ReduceAttrs a = resolve("norm", x, axes, keepdims);
  check_floating("norm", x);
  if (p == 1.0) return reduce(ReduceOp::Norm1, x, a);
  if (p == 2.0) return reduce(ReduceOp::Norm2, x, a);
  SPORE_CHECK(std::isinf(p) && p > 0, "[norm] p = ", p, " is not supported; use 1, 2 or INFINITY");
  check_nonempty("norm", x, a);
  return reduce(ReduceOp::NormInf, x, a);
}

}  // namespace spore::ops
