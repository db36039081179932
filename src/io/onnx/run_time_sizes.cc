// SPDX-License-Identifier: Apache-2.0
#include "io/onnx/run_time_sizes.h"

#include "prims/factories.h"
#include "runtime/dispatch.h"
#include "spore/ops.h"

namespace spore::io::onnx_detail {

namespace {

namespace o = spore::ops;

Tensor i64(int64_t v) {
  return at_import([v] { return o::scalar_tensor(v, DType::Int64); });
}

Tensor ints(const std::vector<int64_t>& v) {
  return at_import([&v] { return o::from_vector(v, Shape{static_cast<Dim>(v.size())}, DType::Int64); });
}

// Input i as an int64 tensor of `n` values (1-D), failing naming the node otherwise.
Tensor int_list(const OpContext& c, size_t i) {
  const Tensor& t = c.in(i);
  if (!is_integral(t.dtype()) || t.dim() != 1 || is_symbolic(t.size(0)))
    c.fail("input " + std::to_string(i) + " must be a 1-D integer tensor of known length, got " +
           std::string(dtype_name(t.dtype())) + shape_str(t.shape()));
  return o::cast(t, DType::Int64);
}

// The last `n` entries of `s` (a 1-D int64 of length m <= n) padded in front with `fill`.
Tensor pad_front(const Tensor& s, int64_t n, int64_t fill) {
  const int64_t m = s.size(0);
  if (m == n) return s;
  return o::concat({ints(std::vector<int64_t>(static_cast<size_t>(n - m), fill)), s}, 0);
}

}  // namespace

Tensor shape_tensor(const Tensor& x) {
  std::vector<Tensor> parts;
  std::vector<int64_t> run;  // consecutive static sizes
  auto flush = [&] {
    if (!run.empty()) parts.push_back(ints(run));
    run.clear();
  };
  for (Dim d : x.shape()) {
    if (!is_symbolic(d)) {
      run.push_back(d);
      continue;
    }
    flush();
    parts.push_back(o::reshape(runtime::call(prims::dim_value_primitive(), prims::DimValueAttrs{d, DType::Int64}, {}), Shape{1}));
  }
  flush();
  if (parts.empty()) return ints({});
  return parts.size() == 1 ? parts[0] : o::concat(parts, 0);
}

std::pair<Tensor, Dim> iota(const Tensor& n) {
  // The bound tensor is a constant one; its broadcast, summed, counts 1..n (a data edge from
  // bind_sizes to every use of the size).
  auto [one, sizes] = o::with_sizes(i64(1), o::reshape(o::cast(n, DType::Int64), Shape{}));
  return {o::sub(o::cumsum(o::broadcast_to(one, Shape{sizes[0]}), 0), i64(1)), sizes[0]};
}

std::vector<Tensor> run_time_reshape(const OpContext& c) {
  const Tensor& x = c.in(0);
  Tensor s = int_list(c, 1);
  const int64_t r = s.size(0);
  const Tensor zero = i64(0), minus_one = i64(-1);
  if (c.i("allowzero", 0) == 0) {
    // 0 copies the input's size at that position (positions past its rank have none to copy;
    // the kernel's element count check refuses them).
    Tensor xs = shape_tensor(x);
    const int64_t xr = x.dim();
    if (xr > r) xs = o::slice(xs, 0, 0, r);
    else if (xr < r) xs = o::concat({xs, ints(std::vector<int64_t>(static_cast<size_t>(r - xr), 0))}, 0);
    s = o::where(o::equal(s, zero), xs, s);
  }
  // -1 is the element count over the product of the others.
  const Tensor is_free = o::equal(s, minus_one);
  const Tensor known = o::prod(o::where(is_free, i64(1), s));
  const Tensor numel = o::prod(shape_tensor(x));
  s = o::where(is_free, o::floor_divide(numel, o::maximum(known, i64(1))), s);
  auto [xb, sizes] = o::with_sizes(x, s);
  return {o::reshape(xb, sizes)};
}

std::vector<Tensor> run_time_expand(const OpContext& c) {
  const Tensor& x = c.in(0);
  const Tensor s = int_list(c, 1);
  const int64_t n = std::max<int64_t>(s.size(0), x.dim());
  // NumPy broadcasting: a 1 in the shape keeps x's size, any other size replaces a 1 of x (or
  // must equal x's: the kernel checks).
  const Tensor xs = pad_front(shape_tensor(x), n, 1), ss = pad_front(s, n, 1);
  auto [xb, sizes] = o::with_sizes(x, o::where(o::equal(ss, i64(1)), xs, ss));
  return {o::broadcast_to(xb, sizes)};
}

std::vector<Tensor> run_time_constant_of_shape(const OpContext& c, const Tensor& value) {
  auto [vb, sizes] = o::with_sizes(o::reshape(value, Shape{}), int_list(c, 0));
  return {o::copy(o::broadcast_to(vb, sizes))};
}

std::vector<Tensor> run_time_range(const OpContext& c) {
  const Tensor &start = c.in(0), &limit = c.in(1), &delta = c.in(2);
  for (size_t i = 0; i < 3; ++i)
    if (c.in(i).numel() != 1) c.fail("input " + std::to_string(i) + " must hold one value, got shape " + shape_str(c.in(i).shape()));
  // ONNX: max(ceil((limit - start) / delta), 0) elements, start + k * delta.
  const Tensor s = o::reshape(start, Shape{}), d = o::reshape(delta, Shape{});
  const Tensor span = o::sub(o::cast(o::reshape(limit, Shape{}), DType::Float64), o::cast(s, DType::Float64));
  const Tensor n = o::maximum(o::cast(o::ceil(o::div(span, o::cast(d, DType::Float64))), DType::Int64), i64(0));
  auto [k, len] = iota(n);
  (void)len;
  return {o::add(s, o::mul(o::cast(k, start.dtype()), d))};
}

std::vector<Tensor> run_time_tile(const OpContext& c) {
  const Tensor& x = c.in(0);
  const Tensor reps = int_list(c, 1);
  if (reps.size(0) != x.dim()) c.fail("repeats has " + dim_str(reps.size(0)) + " entries for rank " + std::to_string(x.dim()));
  auto [xb, r] = o::with_sizes(x, reps);
  // (1, d0, 1, d1, ...) broadcast to (r0, d0, r1, d1, ...), merged pairwise.
  Shape lifted, spread, merged;
  for (int64_t k = 0; k < x.dim(); ++k) {
    const Dim d = x.shape()[static_cast<size_t>(k)], rk = r[static_cast<size_t>(k)];
    lifted.push_back(1), lifted.push_back(d);
    spread.push_back(rk), spread.push_back(d);
    merged.push_back(dim_mul(rk, d));
  }
  return {o::reshape(o::broadcast_to(o::reshape(xb, lifted), spread), merged)};
}

Tensor run_time_window_positions(const OpContext& c, Tensor& d) {
  const Tensor& size = c.in(0);
  if (size.numel() != 1) c.fail("size must hold one value, got shape " + shape_str(size.shape()));
  const Tensor n = o::reshape(o::cast(size, DType::Int64), Shape{});
  auto [k, len] = iota(n);
  (void)len;
  const bool periodic = c.i("periodic", 1) != 0;
  d = o::cast(periodic ? n : o::sub(n, i64(1)), DType::Float64);
  return o::cast(k, DType::Float64);
}

}  // namespace spore::io::onnx_detail
