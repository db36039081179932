// SPDX-License-Identifier: Apache-2.0
#include "ops/promote.h"

#include "spore/ops/elementwise.h"

#include <cstdint>
#include <type_traits>

namespace spore::ops {
namespace {

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

int category(DType t) { return t == DType::Bool ? 0 : is_floating(t) ? 2 : 1; }

Tensor literal_for(const Tensor& t, Scalar s) {
  const DType own = s.default_dtype();
  return literal(s, category(own) <= category(t.dtype()) ? t.dtype() : own);
}

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
  // A weak literal is rebuilt in the target dtype: a literal is a constant, not an op, so no
  // cast is dispatched (and none is traced).
  if (x.weak() && x.dim() == 0 && x.device().type == DeviceType::CPU) {
    if (is_floating(x.dtype())) return literal(x.item<double>(), dtype);
    return literal(x.dtype() == DType::Bool ? Scalar(x.item<bool>()) : Scalar(x.item<int64_t>()), dtype);
  }
  Tensor y = cast(x, dtype);
  y.impl()->weak = x.weak();
  return y;
}

Tensor literal(Scalar s, DType dtype) {
  Tensor t = Tensor::empty({}, dtype);
  t.impl()->weak = true;
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(t.data_ptr());
    if constexpr (std::is_same_v<T, bool>) {
      *p = s.kind() == Scalar::Kind::Float ? s.to_double() != 0 : s.to_int() != 0;
    } else if constexpr (std::is_integral_v<T>) {
      // Integers wrap like PyTorch's (int8 tensor + 300 stays int8); floats go through int64.
      const double d = s.to_double();
      const int64_t v = s.kind() != Scalar::Kind::Float ? s.to_int()
                        : (d >= -9223372036854775808.0 && d < 9223372036854775808.0) ? static_cast<int64_t>(d)
                                                                                     : INT64_MIN;
      *p = static_cast<T>(v);
    } else if constexpr (std::is_same_v<T, double>) {
      *p = s.to_double();
    } else {
      *p = T(static_cast<float>(s.to_double()));
    }
  });
  return t;
}

}  // namespace spore::ops
