// SPDX-License-Identifier: Apache-2.0
// Public elementwise ops beyond elementwise.cc: Python-style division, predicates, erfinv and
// the ternary ops (where, clamp, lerp). Check, promote, then call the primitive.
#include <limits>
#include <type_traits>

#include "ops/promote.h"
#include "prims/divmod.h"
#include "prims/erfinv.h"
#include "prims/predicates.h"
#include "prims/ternary.h"
#include "runtime/dispatch.h"
#include "spore/ops/creation.h"
#include "spore/ops/elementwise.h"

namespace spore::ops {

namespace {

void check_defined(const char* name, std::initializer_list<const Tensor*> xs) {
  for (const Tensor* x : xs) SPORE_CHECK(x->defined(), "[", name, "] an input is an undefined tensor");
}

Tensor divmod(prims::DivModOp op, const char* name, const Tensor& a, const Tensor& b) {
  check_defined(name, {&a, &b});
  const DType t = result_type(a, b);
  SPORE_CHECK(t != DType::Bool, "[", name, "] is not defined for bool tensors (", dtype_name(a.dtype()), ", ",
              dtype_name(b.dtype()), "); cast them to an integer dtype first");
  return runtime::call(prims::divmod_primitive(op), NoAttrs{}, {to_dtype(a, t), to_dtype(b, t)});
}

Tensor predicate(prims::PredicateOp op, const char* name, const Tensor& x) {
  check_defined(name, {&x});
  return runtime::call(prims::predicate_primitive(op), NoAttrs{}, {x});
}

// The identity bound of clamp for a missing side: -inf/+inf for floats, the dtype's limits for
// integers, so one 3-input primitive covers clamp_min and clamp_max too.
Tensor open_bound(DType t, bool upper) {
  if (is_floating(t))
    return full({}, upper ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity(), {t});
  Scalar v = 0;
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      v = static_cast<int64_t>(upper ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest());
  });
  return full({}, v, {t});
}

// A weak 0-d bound is a C++ number (clamp(x, 0, 1000) or weak_scalar): like PyTorch, refuse one
// that does not fit the result dtype instead of letting the conversion wrap it.
void check_literal_bound(const Tensor& b, DType t) {
  if (!b.defined() || !b.weak() || b.dim() != 0 || b.device().type != DeviceType::CPU) return;
  const Scalar s = is_floating(b.dtype())     ? Scalar(b.item<double>())
                   : b.dtype() == DType::Bool ? Scalar(b.item<bool>())
                                              : Scalar(b.item<int64_t>());
  check_scalar_fits(s, t, "clamp");
}

}  // namespace

Tensor floor_divide(const Tensor& a, const Tensor& b) {
  return divmod(prims::DivModOp::floor_divide, "floor_divide", a, b);
}
Tensor remainder(const Tensor& a, const Tensor& b) { return divmod(prims::DivModOp::remainder, "remainder", a, b); }

Tensor logical_not(const Tensor& x) { return predicate(prims::PredicateOp::logical_not, "logical_not", x); }
Tensor isnan(const Tensor& x) { return predicate(prims::PredicateOp::isnan, "isnan", x); }
Tensor isinf(const Tensor& x) { return predicate(prims::PredicateOp::isinf, "isinf", x); }
Tensor isfinite(const Tensor& x) { return predicate(prims::PredicateOp::isfinite, "isfinite", x); }

Tensor erfinv(const Tensor& x) {
  check_defined("erfinv", {&x});
  return runtime::call(prims::erfinv_primitive(), NoAttrs{}, {to_dtype(x, float_type(x.dtype()))});
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_defined("where", {&cond, &a, &b});
  SPORE_CHECK(cond.dtype() == DType::Bool, "[where] condition must be a bool tensor, got ", dtype_name(cond.dtype()),
              "; compare it (e.g. not_equal(c, 0)) or cast it to bool");
  const DType t = result_type(a, b);
  return runtime::call(prims::ternary_primitive(prims::TernaryOp::where), NoAttrs{},
                       {cond, to_dtype(a, t), to_dtype(b, t)});
}

Tensor clamp(const Tensor& x, const Tensor& lo, const Tensor& hi) {
  SPORE_CHECK(x.defined(), "[clamp] input is an undefined tensor");
  SPORE_CHECK(lo.defined() || hi.defined(), "[clamp] at least one of lo and hi must be given");
  DType t = lo.defined() && hi.defined() ? result_type({&x, &lo, &hi})
            : lo.defined()               ? result_type(x, lo)
                                         : result_type(x, hi);
  SPORE_CHECK(t != DType::Bool, "[clamp] is not defined for bool tensors; cast to an integer dtype first");
  check_literal_bound(lo, t);
  check_literal_bound(hi, t);
  Tensor l = lo.defined() ? to_dtype(lo, t) : open_bound(t, false);
  Tensor h = hi.defined() ? to_dtype(hi, t) : open_bound(t, true);
  return runtime::call(prims::ternary_primitive(prims::TernaryOp::clamp), NoAttrs{}, {to_dtype(x, t), l, h});
}

Tensor clamp(const Tensor& x, Scalar lo, Scalar hi) {
  SPORE_CHECK(x.defined(), "[clamp] input is an undefined tensor");
  return clamp(x, weak_scalar(lo), weak_scalar(hi));
}

Tensor lerp(const Tensor& a, const Tensor& b, const Tensor& weight) {
  check_defined("lerp", {&a, &b, &weight});
  const DType t = float_type(result_type({&a, &b, &weight}));
  return runtime::call(prims::ternary_primitive(prims::TernaryOp::lerp), NoAttrs{},
                       {to_dtype(a, t), to_dtype(b, t), to_dtype(weight, t)});
}

}  // namespace spore::ops
