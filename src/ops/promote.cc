// SPDX-License-Identifier: Apache-2.0
#include "ops/promote.h"

#include "spore/ops/elementwise.h"

namespace spore::ops {
namespace {

int category(DType t) { return t == DType::Bool ? 0 : is_floating(t) ? 2 : 1; }

struct Slot {
  bool set = false;
  DType t = DType::Bool;
  void add(DType d) {
    t = set ? promote_types(t, d) : d;
    set = true;
  }
};

// c10's combine_categories: `higher` wins unless `lower` is of a higher category.
Slot combine(Slot higher, Slot lower) {
  if (!higher.set) return lower;
  if (!lower.set) return higher;
  if (category(higher.t) == 2) return higher;
  if (higher.t == DType::Bool || category(lower.t) == 2) {
    higher.t = promote_types(higher.t, lower.t);
    return higher;
  }
  return higher;
}

}  // namespace

DType result_type(std::initializer_list<const Tensor*> xs) {
  Slot dim, zero, weak;
  for (const Tensor* x : xs) {
    if (!x->defined()) continue;
    if (x->weak()) {
      int c = category(x->dtype());
      weak.add(c == 0 ? DType::Bool : c == 1 ? DType::Int64 : DType::Float32);
    } else if (x->dim() == 0) {
      zero.add(x->dtype());
    } else {
      dim.add(x->dtype());
    }
  }
  Slot r = combine(dim, combine(zero, weak));
  return r.t;
}

Tensor to_dtype(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  Tensor y = cast(x, dtype);
  y.impl()->weak = x.weak();
  return y;
}

}  // namespace spore::ops
