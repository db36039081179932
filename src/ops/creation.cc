// SPDX-License-Identifier: Apache-2.0
#include "spore/ops/creation.h"

#include <cmath>
#include <cstring>

#include "ops/promote.h"
#include "prims/factories.h"
#include "runtime/dispatch.h"
#include "spore/ops/elementwise.h"
#include "spore/ops/shape.h"

namespace spore::ops {

namespace {
void check_shape(const Shape& s, const char* op) {
  for (Dim d : s)
    SPORE_CHECK(d >= 0, "[", op, "] shape ", shape_str(s), " has a negative dimension; sizes must be >= 0");
}
}  // namespace

Tensor empty(const Shape& shape, TensorOptions opt) {
  check_shape(shape, "empty");
  return Tensor::empty(shape, opt.dtype, opt.device);
}

Tensor full(const Shape& shape, Scalar value, TensorOptions opt) {
  check_shape(shape, "full");
  check_scalar_fits(value, opt.dtype, "full");
  prims::FillAttrs a;
  a.shape = shape;
  a.dtype = opt.dtype;
  a.value = value.to_double();
  a.int_value = value.kind() == Scalar::Kind::Float ? static_cast<int64_t>(value.to_double()) : value.to_int();
  if (is_integral(opt.dtype) && value.kind() == Scalar::Kind::Float)
    SPORE_CHECK(std::isfinite(value.to_double()), "[full] cannot fill an ", dtype_name(opt.dtype),
                " tensor with ", value.to_double());
  return runtime::call(prims::fill_primitive(), a, {}, opt.device);
}
Tensor zeros(const Shape& shape, TensorOptions opt) { return full(shape, 0, opt); }
Tensor ones(const Shape& shape, TensorOptions opt) { return full(shape, 1, opt); }
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), {t.dtype(), t.device()}); }
Tensor ones_like(const Tensor& t) { return ones(t.shape(), {t.dtype(), t.device()}); }
Tensor full_like(const Tensor& t, Scalar v) { return full(t.shape(), v, {t.dtype(), t.device()}); }
Tensor scalar_tensor(Scalar value, DType dtype) { return full({}, value, {dtype}); }
Tensor scalar_tensor(Scalar value) { return full({}, value, {value.default_dtype()}); }

Tensor arange(Scalar stop) { return arange(0, stop, 1); }
Tensor arange(Scalar start, Scalar stop, Scalar step) {
  bool all_int = start.kind() != Scalar::Kind::Float && stop.kind() != Scalar::Kind::Float &&
                 step.kind() != Scalar::Kind::Float;
  return arange(start, stop, step, {all_int ? DType::Int64 : DType::Float32, kCPU});
}
Tensor arange(Scalar start, Scalar stop, Scalar step, TensorOptions opt) {
  const double s = start.to_double(), e = stop.to_double(), st = step.to_double();
  SPORE_CHECK(st != 0, "[arange] step must be non-zero");
  SPORE_CHECK(std::isfinite(s) && std::isfinite(e), "[arange] start and stop must be finite, got ", s, " and ", e);
  SPORE_CHECK((e - s) / st >= 0 || e == s, "[arange] step ", st, " goes away from stop: start ", s, ", stop ", e,
              "; flip the sign of step");
  prims::ArangeAttrs a;
  a.n = static_cast<int64_t>(std::ceil((e - s) / st));
  if (start.kind() != Scalar::Kind::Float && stop.kind() != Scalar::Kind::Float && step.kind() != Scalar::Kind::Float) {
    int64_t is = start.to_int(), ie = stop.to_int(), ist = step.to_int();
    a.n = ist > 0 ? (ie - is + ist - 1) / ist : (is - ie - ist - 1) / -ist;
  }
  a.n = std::max<int64_t>(a.n, 0);
  a.start = s;
  a.step = st;
  a.int_start = start.to_int();
  a.int_step = step.to_int();
  SPORE_CHECK(!is_integral(opt.dtype, true) || a.int_step != 0 || a.n == 0, "[arange] step ", st,
              " truncates to 0 for the integer dtype ", dtype_name(opt.dtype), "; use an integer step or a float dtype");
  a.dtype = opt.dtype;
  return runtime::call(prims::arange_primitive(), a, {}, opt.device);
}

Tensor linspace(double start, double stop, int64_t steps, TensorOptions opt) {
  SPORE_CHECK(steps >= 0, "[linspace] steps must be >= 0, got ", steps);
  return runtime::call(prims::linspace_primitive(), prims::LinspaceAttrs{start, stop, steps, opt.dtype}, {}, opt.device);
}

Tensor eye(int64_t n, int64_t m, TensorOptions opt) {
  if (m < 0) m = n;
  SPORE_CHECK(n >= 0, "[eye] n must be >= 0, got ", n);
  SPORE_CHECK(m >= 0, "[eye] m must be >= 0, got ", m);
  Tensor r = arange(0, n, 1, {DType::Int64, opt.device}).reshape({n, 1});
  Tensor c = arange(0, m, 1, {DType::Int64, opt.device});
  return cast(equal(r, c), opt.dtype);
}

template <class T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape, DType dtype) {
  Dim n = 1;
  for (Dim d : shape) n *= d;
  SPORE_CHECK(n == static_cast<Dim>(values.size()), "[tensor] ", values.size(), " values do not fill shape ",
              shape_str(shape), " (", n, " elements)");
  Tensor t = Tensor::empty(shape, dtype_of<T>());
  if constexpr (std::is_same_v<T, bool>) {
    bool* p = t.data<bool>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  } else {
    if (!values.empty()) std::memcpy(t.data_ptr(), values.data(), values.size() * sizeof(T));
  }
  return dtype == dtype_of<T>() ? t : t.to(dtype);
}
template Tensor from_vector(const std::vector<float>&, const Shape&, DType);
template Tensor from_vector(const std::vector<double>&, const Shape&, DType);
template Tensor from_vector(const std::vector<int64_t>&, const Shape&, DType);
template Tensor from_vector(const std::vector<int32_t>&, const Shape&, DType);
template Tensor from_vector(const std::vector<int16_t>&, const Shape&, DType);
template Tensor from_vector(const std::vector<int8_t>&, const Shape&, DType);
template Tensor from_vector(const std::vector<uint8_t>&, const Shape&, DType);
template Tensor from_vector(const std::vector<bool>&, const Shape&, DType);

Tensor tensor(std::initializer_list<float> v) { return from_vector(std::vector<float>(v)); }
Tensor tensor(std::initializer_list<double> v) { return from_vector(std::vector<double>(v)); }
Tensor tensor(std::initializer_list<int64_t> v) { return from_vector(std::vector<int64_t>(v)); }
Tensor tensor(std::initializer_list<int> v) {
  std::vector<int64_t> w(v.begin(), v.end());
  return from_vector(w);
}
Tensor tensor(std::initializer_list<bool> v) { return from_vector(std::vector<bool>(v)); }


}  // namespace spore::ops
