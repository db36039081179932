// SPDX-License-Identifier: Apache-2.0
#include "io/onnx/run_time_sizes.h"

#include "prims/bind_sizes.h"
#include "prims/factories.h"
#include "prims/shape_of.h"
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

// Element k of a 1-D int64 tensor, 0-d.
Tensor at(const Tensor& v, int64_t k) { return o::select(v, 0, k); }

// Size `a` of x as a 0-d int64 (a dim_value node when symbolic).
Tensor size_of(const Tensor& x, int64_t a) { return at(shape_tensor(x), a); }

// x[..., start + k * step, ...] for k < len along `axis`: one index_select.
Tensor take_run(const Tensor& x, int64_t axis, const Tensor& start, const Tensor& step, const Tensor& len) {
  auto [k, n] = iota(len);
  (void)n;
  return o::index_select(x, axis, o::add(start, o::mul(k, step)));
}

// ONNX Slice along one axis of y: start, end and step are 0-d int64 (run-time values).
Tensor slice_axis(const OpContext& c, Tensor y, int64_t a, Tensor st, Tensor en, const Tensor& sp) {
  const Tensor zero = i64(0);
  y = checked(c, y, o::not_equal(sp, zero), "a step is 0; steps must not be 0");
  const Tensor n = size_of(y, a);
  st = o::where(o::less(st, zero), o::add(st, n), st);
  en = o::where(o::less(en, zero), o::add(en, n), en);
  const Tensor up = o::greater(sp, zero), last = o::sub(n, i64(1));
  st = o::where(up, o::minimum(o::maximum(st, zero), n), o::minimum(o::maximum(st, zero), last));
  en = o::where(up, o::minimum(o::maximum(en, zero), n), o::minimum(o::maximum(en, i64(-1)), last));
  const Tensor span = o::div(o::cast(o::sub(en, st), DType::Float64), o::cast(sp, DType::Float64));
  // (A step of 0, refused above, would divide by it: its length is made 0.)
  const Tensor len = o::where(o::equal(sp, zero), zero, o::maximum(o::cast(o::ceil(span), DType::Int64), zero));
  return take_run(y, a, st, sp, len);
}

}  // namespace

namespace {
// `dims` as an int64 1-D tensor: constants, and a dim_value node per symbolic entry.
Tensor dims_tensor(const std::vector<Dim>& dims) {
  std::vector<Tensor> parts;
  std::vector<int64_t> run;  // consecutive static sizes
  auto flush = [&] {
    if (!run.empty()) parts.push_back(ints(run));
    run.clear();
  };
  for (Dim d : dims) {
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
}  // namespace

Tensor shape_tensor(const Tensor& x) {
  // A size that values give (a value symbol) is read from x itself: the edge keeps the node
  // that binds it alive and ahead (dim_value has no inputs).
  for (Dim d : x.shape())
    if (is_value_size(d)) return runtime::call(prims::shape_of_primitive(), NoAttrs{}, {x});
  return dims_tensor(std::vector<Dim>(x.shape().begin(), x.shape().end()));
}

Tensor run_time_values(const Tensor& t) {
  const std::vector<int64_t> v = at_import([&t] { return o::cast(t, DType::Int64).contiguous(); }).to_vector<int64_t>();
  return o::reshape(dims_tensor(std::vector<Dim>(v.begin(), v.end())), t.shape());
}

Tensor checked(const OpContext& c, const Tensor& x, const Tensor& ok, const std::string& rule) {
  const Tensor all = o::all(ok);
  if (all.device().type != DeviceType::Meta) {
    if (!at_import([&all] { return o::cast(all, DType::Int64); }).item<int64_t>()) c.fail(rule);
    return x;
  }
  // A size of 0 when the rule holds, -1 when not: bind_sizes fails with `what` on a negative one.
  prims::BindSizesAttrs a;
  a.sizes.push_back(new_value_symbol());
  a.what = "[onnx] node '" + c.node().name() + "' (" + c.node().op_type() + "): " + rule;
  return runtime::call(prims::bind_sizes_primitive(), a, {x, o::where(all, i64(0), i64(-1))});
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
  Tensor s = o::reshape(start, Shape{});
  const Tensor d = o::reshape(delta, Shape{}), l = o::reshape(limit, Shape{});
  Tensor ok = o::not_equal(d, o::zeros_like(d));
  if (is_floating(start.dtype()))
    ok = o::logical_and(ok, o::logical_and(o::isfinite(s), o::logical_and(o::isfinite(l), o::isfinite(d))));
  // (A count past 2^40 elements could not be allocated, and past 2^63 would not convert.)
  const Tensor span = o::sub(o::cast(l, DType::Float64), o::cast(s, DType::Float64));
  ok = o::logical_and(ok, o::less_equal(o::abs(o::div(span, o::cast(d, DType::Float64))), o::full_like(span, 1099511627776.0)));
  s = checked(c, s, ok, "delta must not be 0, start, limit and delta must be finite, and the count at most 2^40");
  const Tensor n = o::maximum(o::cast(o::ceil(o::div(span, o::cast(d, DType::Float64))), DType::Int64), i64(0));
  auto [k, len] = iota(n);
  (void)len;
  return {o::add(s, o::mul(o::cast(k, start.dtype()), d))};
}

std::vector<Tensor> run_time_tile(const OpContext& c) {
  const Tensor& x = c.in(0);
  const Tensor reps = int_list(c, 1);
  if (reps.size(0) != x.dim()) c.fail("repeats has " + dim_str(reps.size(0)) + " entries for rank " + std::to_string(x.dim()));
  auto [xb, r] = o::with_sizes(checked(c, x, o::greater_equal(reps, i64(0)), "repeats must be >= 0"), reps);
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

std::vector<Tensor> run_time_slice(const OpContext& c) {
  const Tensor& x = c.in(0);
  const Tensor starts = int_list(c, 1), ends = int_list(c, 2);
  const int64_t m = starts.size(0), r = x.dim();
  if (ends.size(0) != m) c.fail("starts and ends differ in length");
  const Tensor steps = c.has(4) ? int_list(c, 4) : ints(std::vector<int64_t>(static_cast<size_t>(m), 1));
  if (steps.size(0) != m) c.fail("starts and steps differ in length");
  Tensor y = x;
  if (!c.has(3) || c.is_constant(3)) {
    std::vector<int64_t> axes;
    if (c.has(3)) axes = c.ints_of(3);
    else
      for (int64_t k = 0; k < m; ++k) axes.push_back(k);
    if (static_cast<int64_t>(axes.size()) != m) c.fail("starts and axes differ in length");
    for (int64_t k = 0; k < m; ++k) y = slice_axis(c, y, axis_of(c, axes[static_cast<size_t>(k)], r), at(starts, k), at(ends, k), at(steps, k));
    return {y};
  }
  // Run-time axes: every axis may be sliced, by the entry that names it (else all of it).
  Tensor axes = int_list(c, 3);
  if (axes.size(0) != m) c.fail("starts and axes differ in length");
  y = checked(c, y, o::logical_and(o::greater_equal(axes, i64(-r)), o::less(axes, i64(r))),
              "an axis is outside [" + std::to_string(-r) + ", " + std::to_string(r) + ") for rank " + std::to_string(r));
  axes = o::where(o::less(axes, i64(0)), o::add(axes, i64(r)), axes);
  for (int64_t a = 0; a < r; ++a) {
    const Tensor hit = o::equal(axes, i64(a)), named = o::any(hit);
    auto pick = [&](const Tensor& v) { return o::sum(o::where(hit, v, i64(0))); };
    y = slice_axis(c, y, a, pick(starts), o::where(named, pick(ends), size_of(y, a)), o::where(named, pick(steps), i64(1)));
  }
  return {y};
}

std::vector<Tensor> run_time_split(const OpContext& c, int64_t axis) {
  const Tensor& x = c.in(0);
  const Tensor sizes = int_list(c, 1);
  const int64_t n = sizes.size(0);
  if (n != c.node().output_size()) c.fail("split has " + std::to_string(n) + " sizes for " + std::to_string(c.node().output_size()) + " outputs");
  // Part k starts where the parts before it end; the parts must cover the axis exactly.
  const Tensor ends = o::cumsum(sizes, 0);
  const Tensor xc = checked(c, x, o::logical_and(o::equal(o::sum(sizes), size_of(x, axis)), o::all(o::greater_equal(sizes, i64(0)))),
                            "the split sizes must be >= 0 and add up to the size of axis " + std::to_string(axis));
  std::vector<Tensor> parts;
  for (int64_t k = 0; k < n; ++k) parts.push_back(take_run(xc, axis, o::sub(at(ends, k), at(sizes, k)), i64(1), at(sizes, k)));
  return parts;
}

std::vector<Tensor> run_time_pad(const OpContext& c, const std::string& mode, const Tensor& value) {
  const Tensor& x = c.in(0);
  const Tensor pads = int_list(c, 1);
  const int64_t r = x.dim();
  if (pads.size(0) != 2 * r) c.fail("pads has " + dim_str(pads.size(0)) + " entries for rank " + std::to_string(r));
  // Per axis, output position p reads input p - before: clamped (edge), mirrored (reflect), or
  // the pad value where it falls outside (constant). Negative pads crop.
  Tensor y = x;
  for (int64_t a = 0; a < r; ++a) {
    const Tensor n = size_of(y, a), before = at(pads, a), after = at(pads, a + r), zero = i64(0);
    const Tensor padded = o::add(o::add(n, before), after);
    y = checked(c, y, o::greater_equal(padded, zero), "pads crop more than axis " + std::to_string(a) + " holds");
    if (mode == "reflect")
      y = checked(c, y, o::logical_and(o::less(before, n), o::less(after, n)), "reflect pads must be smaller than axis " + std::to_string(a));
    auto [p, len] = iota(padded);
    (void)len;
    const Tensor src = o::sub(p, before), last = o::sub(n, i64(1));
    Tensor idx;
    if (mode == "reflect") {
      const Tensor m = o::abs(src);  // -k mirrors to k
      idx = o::where(o::greater(m, last), o::sub(o::add(last, last), m), m);
    } else {
      idx = o::minimum(o::maximum(src, zero), last);
    }
    Tensor taken = o::index_select(y, a, idx);
    if (mode == "constant") {
      Shape along(static_cast<size_t>(r), 1);
      along[static_cast<size_t>(a)] = taken.size(a);
      const Tensor inside = o::reshape(o::logical_and(o::greater_equal(src, zero), o::less_equal(src, last)), along);
      taken = o::where(inside, taken, o::cast(value, x.dtype()));
    }
    y = taken;
  }
  return {y};
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
