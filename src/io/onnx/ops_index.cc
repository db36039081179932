// SPDX-License-Identifier: Apache-2.0
// ONNX indexing operators beyond Gather: OneHot, GatherND, ScatterND, Compress, NonZero, and the
// window generators (Blackman, Hann, Hamming). GatherND / ScatterND linearize the index tuples
// against the (static) data shape and use take_along_axis / scatter on the flattened data.
// Compress and NonZero have value-dependent output shapes: a run-time condition / input gives a
// count that the graph interpreter binds when nonzero runs (a value symbol, shape.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>

#include "io/onnx/op_context.h"
#include "io/onnx/run_time_sizes.h"
#include "spore/ops.h"

namespace spore::io::onnx_detail {

namespace {

using Ts = std::vector<Tensor>;
namespace o = spore::ops;

// OneHot with a depth known when the graph runs: the class axis is a value symbol.
Ts run_time_one_hot(const OpContext& c, const Tensor& values, int64_t axis) {
  const Tensor& idx = c.in(0);
  if (c.in(1).numel() != 1) c.fail("depth must hold one value, got shape " + shape_str(c.in(1).shape()));
  const Tensor& d = c.in(1);
  Tensor depth = o::reshape(o::cast(is_floating(d.dtype()) ? o::trunc(d) : d, DType::Int64), Shape{});
  depth = checked(c, depth, o::greater(depth, o::zeros_like(depth)), "depth must be positive");
  auto [classes, n] = iota(depth);
  Shape at(static_cast<size_t>(idx.dim() + 1), 1);
  at[static_cast<size_t>(axis)] = n;
  Tensor i = o::cast(is_floating(idx.dtype()) ? o::trunc(idx) : idx, DType::Int64);
  i = o::where(o::less(i, o::zeros_like(i)), o::add(i, depth), i);
  const Tensor hit = o::equal(o::unsqueeze(i, axis), o::reshape(classes, at));
  const Tensor flat = o::reshape(values, Shape{2});
  return {o::where(hit, o::select(flat, 0, 1), o::select(flat, 0, 0))};
}

Ts one_hot_op(const OpContext& c) {
  const Tensor& idx = c.in(0);
  if (!c.is_constant(1)) {
    if (numel_of(c.in(2).shape()) != 2) c.fail("values must hold [off, on], got shape " + shape_str(c.in(2).shape()));
    return run_time_one_hot(c, c.in(2), axis_of(c, c.i("axis", -1), idx.dim() + 1));
  }
  const auto depth_v = c.doubles_of(1);
  if (depth_v.size() != 1) c.fail("depth must hold one value");
  const int64_t depth = static_cast<int64_t>(depth_v[0]);
  if (depth < 1) c.fail("depth must be positive, got " + std::to_string(depth));
  const Tensor& values = c.in(2);
  if (numel_of(values.shape()) != 2) c.fail("values must hold [off, on], got shape " + shape_str(values.shape()));
  const int64_t r = idx.dim() + 1;
  const int64_t axis = axis_of(c, c.i("axis", -1), r);
  Tensor i = is_floating(idx.dtype()) ? o::trunc(idx) : idx;
  i = o::cast(i, DType::Int64);
  // Negative indices count from the end; anything still outside [0, depth) matches no class.
  i = o::where(o::less(i, o::zeros_like(i)), o::add(i, o::full_like(i, depth)), i);
  Shape classes(static_cast<size_t>(r), 1);
  classes[static_cast<size_t>(axis)] = depth;
  Tensor ar = at_import([&] { return o::reshape(o::arange(0, depth, 1, {DType::Int64}), classes); });
  Tensor hit = o::equal(o::unsqueeze(i, axis), ar);
  Tensor flat = o::reshape(values, Shape{2});
  return {o::where(hit, o::select(flat, 0, 1), o::select(flat, 0, 0))};
}

// Index tuples (..., k) into dims [b, b + k) of `data` as flat positions (negatives wrap).
Tensor linear_index(const OpContext& c, const Tensor& data, const Tensor& indices, int64_t b) {
  const int64_t k = indices.size(-1);
  if (k < 1 || b + k > data.dim())
    c.fail("index tuples of length " + std::to_string(k) + " do not fit data of shape " + shape_str(data.shape()) +
           " after " + std::to_string(b) + " batch dims");
  Tensor ix = o::cast(indices, DType::Int64);
  Tensor lin;
  int64_t stride = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    const int64_t dim = data.size(b + j);
    Tensor ij = o::select(ix, -1, j);
    ij = o::where(o::less(ij, o::zeros_like(ij)), o::add(ij, o::full_like(ij, dim)), ij);
    Tensor term = stride == 1 ? ij : o::mul(ij, o::full_like(ij, stride));
    lin = lin.defined() ? o::add(lin, term) : term;
    stride *= dim;
  }
  return lin;
}

Ts gather_nd_op(const OpContext& c) {
  const Tensor& data = c.in(0);
  const Tensor& indices = c.in(1);
  c.check_static(data);
  c.check_static(indices);
  const int64_t b = c.i("batch_dims", 0);
  if (b < 0 || b >= std::min(data.dim(), indices.dim())) c.fail("batch_dims " + std::to_string(b) + " is out of range");
  const int64_t k = indices.size(-1);
  Tensor lin = linear_index(c, data, indices, b);  // indices.shape[:-1]
  int64_t nb = 1, np = 1, nr = 1;
  Shape out;
  for (int64_t j = 0; j < b; ++j) nb *= data.size(j), out.push_back(data.size(j));
  for (int64_t j = b; j < b + k; ++j) np *= data.size(j);
  for (int64_t j = b; j < indices.dim() - 1; ++j) out.push_back(indices.size(j));
  for (int64_t j = b + k; j < data.dim(); ++j) nr *= data.size(j), out.push_back(data.size(j));
  Tensor flat = o::reshape(data, Shape{nb, np, nr});
  Tensor li = o::reshape(lin, Shape{nb, -1, 1});
  return {o::reshape(o::take_along_axis(flat, li, 1), out)};
}

Ts scatter_nd_op(const OpContext& c) {
  const Tensor& data = c.in(0);
  const Tensor& indices = c.in(1);
  const Tensor& updates = c.in(2);
  c.check_static(data);
  c.check_static(indices);
  const std::string red = c.s("reduction", "none");
  const int64_t k = indices.size(-1);
  int64_t np = 1, nr = 1;
  for (int64_t j = 0; j < k && j < data.dim(); ++j) np *= data.size(j);
  for (int64_t j = k; j < data.dim(); ++j) nr *= data.size(j);
  Tensor lin = o::reshape(linear_index(c, data, indices, 0), Shape{-1, 1});
  const int64_t m = lin.size(0);
  Tensor idx = o::expand(lin, Shape{m, nr});
  Tensor flat = o::reshape(data, Shape{np, nr});
  Tensor src = o::reshape(updates, Shape{m, nr});
  Tensor y;
  if (red == "none") {
    y = o::scatter(flat, 0, idx, src);
  } else if (red == "add") {
    y = o::scatter_add(flat, 0, idx, src);
  } else if (red == "mul" || red == "max" || red == "min") {
    // No scatter-multiply primitive: the index tuples (known at import time) are applied in
    // rounds of distinct positions, the k-th round taking each position's k-th update, so
    // repeated tuples combine in order.
    (void)c.ints_of(1);
    Tensor li = at_import([&] { return o::reshape(linear_index(c, data, c.in(1), 0), Shape{-1}); });
    const auto pos = li.to_vector<int64_t>();
    std::map<int64_t, int64_t> seen;
    std::vector<std::vector<int64_t>> rounds;
    for (size_t j = 0; j < pos.size(); ++j) {
      const auto round = static_cast<size_t>(seen[pos[j]]++);
      if (rounds.size() <= round) rounds.emplace_back();
      rounds[round].push_back(static_cast<int64_t>(j));
    }
    y = flat;
    for (const auto& rows : rounds) {
      const int64_t mr = static_cast<int64_t>(rows.size());
      std::vector<int64_t> at;
      for (int64_t j : rows) at.push_back(pos[static_cast<size_t>(j)]);
      Tensor ri = at_import([&] { return o::from_vector(rows, Shape{mr}, DType::Int64); });
      Tensor ix = at_import([&] { return o::expand(o::reshape(o::from_vector(at, Shape{mr}, DType::Int64), Shape{mr, 1}), Shape{mr, nr}); });
      Tensor hit = at_import([&] {
        return o::scatter(o::zeros(Shape{np, nr}, {DType::Bool}), 0, ix, o::ones(Shape{mr, nr}, {DType::Bool}));
      });
      Tensor placed = o::scatter(y, 0, ix, o::index_select(src, 0, ri));
      Tensor combined = red == "mul" ? o::mul(y, placed) : red == "max" ? o::maximum(y, placed) : o::minimum(y, placed);
      y = o::where(hit, combined, y);
    }
  } else {
    c.fail("reduction '" + red + "' is not one of none, add, mul, max, min");
  }
  return {o::reshape(y, data.shape())};
}

Ts compress_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  Tensor src = x;
  int64_t axis = 0;
  if (c.attr("axis")) {
    axis = axis_of(c, c.i("axis", 0), x.dim());
  } else {
    src = o::reshape(x, Shape{-1});
  }
  const int64_t n = src.size(axis);
  if (!c.is_constant(1)) {
    // A run-time condition: the kept count is a value symbol that nonzero binds when it runs.
    const Tensor& cond = c.in(1);
    if (cond.dim() != 1) c.fail("condition must be 1-D, got " + shape_str(cond.shape()));
    if (!is_symbolic(n) && !is_symbolic(cond.size(0)) && cond.size(0) > n)
      c.fail("condition has " + dim_str(cond.size(0)) + " entries for an axis of " + std::to_string(n));
    return {o::index_select(src, axis, o::reshape(o::nonzero(cond), Shape{-1}))};
  }
  const auto cond = c.ints_of(1);
  if (static_cast<int64_t>(cond.size()) > n)
    c.fail("condition has " + std::to_string(cond.size()) + " entries for an axis of " + std::to_string(n));
  std::vector<int64_t> keep;
  for (size_t j = 0; j < cond.size(); ++j)
    if (cond[j]) keep.push_back(static_cast<int64_t>(j));
  Tensor ix = at_import([&] { return o::from_vector(keep, Shape{static_cast<Dim>(keep.size())}, DType::Int64); });
  return {o::index_select(src, axis, ix)};
}

// A run-time input gives a count known only when the graph runs (a value symbol, shape.h).
Ts non_zero_op(const OpContext& c) {
  if (!c.is_constant(0)) return {o::transpose(o::nonzero(c.in(0)), 0, 1)};
  return {at_import([&] { return o::transpose(o::nonzero(c.in(0)), 0, 1); })};
}

template <int Kind>  // 0 Blackman, 1 Hann, 2 Hamming
Ts window_op(const OpContext& c) {
  const int64_t dt = c.i("output_datatype", 1);
  DType out = DType::Float32;
  if (dt == 11) out = DType::Float64;
  else if (dt == 10) out = DType::Float16;
  else if (dt != 1) c.fail("output_datatype " + std::to_string(dt) + " is not float, double or float16");
  if (!c.is_constant(0)) {
    // A size known when the graph runs: the same formulas on tensors, in float64.
    Tensor d;
    const Tensor k = run_time_window_positions(c, d);
    const Tensor t = o::div(k, d) * (2 * std::numbers::pi);
    const Tensor w = Kind == 0   ? o::cos(t) * -0.5 + o::cos(t * 2.0) * 0.08 + 0.42
                     : Kind == 1 ? o::cos(t) * -0.5 + 0.5
                                 : o::cos(t) * (-21.0 / 46.0) + 25.0 / 46.0;
    return {o::cast(w, out)};
  }
  const auto sz = c.ints_of(0);
  if (sz.size() != 1 || sz[0] < 0) c.fail("size must be one non-negative value");
  const int64_t n = sz[0];
  const bool periodic = c.i("periodic", 1) != 0;
  const double d = static_cast<double>(periodic ? n : n - 1);
  std::vector<double> w(static_cast<size_t>(n));
  const double pi = std::numbers::pi;
  for (int64_t k = 0; k < n; ++k) {
    const double t = 2 * pi * static_cast<double>(k) / d;
    w[static_cast<size_t>(k)] = Kind == 0   ? 0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2 * t)
                                : Kind == 1 ? 0.5 - 0.5 * std::cos(t)
                                            : 25.0 / 46.0 - (21.0 / 46.0) * std::cos(t);
  }
  return {at_import([&] { return o::cast(o::from_vector(w, Shape{n}, DType::Float64), out); })};
}

Ts reverse_sequence_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  c.check_static(x);
  const int64_t ta = axis_of(c, c.i("time_axis", 0), x.dim()), ba = axis_of(c, c.i("batch_axis", 1), x.dim());
  if (ta == ba || std::min(ta, ba) != 0 || std::max(ta, ba) != 1) c.fail("time_axis and batch_axis must be 0 and 1");
  const int64_t t = x.size(ta), b = x.size(ba);
  Shape is(static_cast<size_t>(x.dim()), 1);
  is[0] = x.size(0), is[1] = x.size(1);
  if (!c.is_constant(1)) {
    // Lengths known when the graph runs: the source time of (i, j) is len_j - 1 - i for i < len_j,
    // else i. A length outside [0, t] gives an index take_along_axis refuses when it runs.
    const Tensor& lens_t = c.in(1);
    if (lens_t.dim() != 1 || lens_t.size(0) != b) c.fail("sequence_lens must have shape (" + std::to_string(b) + ",), got " + shape_str(lens_t.shape()));
    Shape time_shape{t, 1}, len_shape{1, b};
    if (ta == 1) std::swap(time_shape[0], time_shape[1]), std::swap(len_shape[0], len_shape[1]);
    const Tensor i = at_import([&] { return o::reshape(o::arange(0, t, 1, {DType::Int64}), time_shape); });
    const Tensor len = o::reshape(o::cast(lens_t, DType::Int64), len_shape);
    const Tensor src = o::where(o::less(i, len), o::sub(o::sub(len, o::ones_like(len)), i), o::add(i, o::zeros_like(len)));
    return {o::take_along_axis(x, o::reshape(src, is), ta)};
  }
  const auto lens = c.ints_of(1);
  if (static_cast<int64_t>(lens.size()) != b) c.fail("sequence_lens has " + std::to_string(lens.size()) + " entries for batch " + std::to_string(b));
  // idx[time][batch] (laid out as x's first two axes): the source time of each element.
  std::vector<int64_t> idx(static_cast<size_t>(t * b));
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j < b; ++j) {
      const int64_t len = lens[static_cast<size_t>(j)];
      if (len < 0 || len > t) c.fail("sequence length " + std::to_string(len) + " is outside [0, " + std::to_string(t) + "]");
      const int64_t v = i < len ? len - 1 - i : i;
      idx[static_cast<size_t>(ta == 0 ? i * b + j : j * t + i)] = v;
    }
  Tensor ix = at_import([&] { return o::from_vector(idx, is, DType::Int64); });
  return {o::take_along_axis(x, ix, ta)};
}

// Determinant of the last two (static, small) axes by the Leibniz formula: n! products.
Ts det_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  if (x.dim() < 2 || x.size(-1) != x.size(-2)) c.fail("needs square matrices in the last two axes, got " + shape_str(x.shape()));
  const int64_t n = x.size(-1);
  if (n < 1 || n > 5) c.fail("matrices of size " + std::to_string(n) + " are not supported (1 to 5)");
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) perm[static_cast<size_t>(k)] = k;
  Tensor acc;
  do {
    int64_t inv = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) inv += perm[static_cast<size_t>(i)] > perm[static_cast<size_t>(j)];
    Tensor term;
    for (int64_t i = 0; i < n; ++i) {
      Tensor e = o::select(o::select(x, -2, i), -1, perm[static_cast<size_t>(i)]);
      term = term.defined() ? o::mul(term, e) : e;
    }
    acc = !acc.defined() ? (inv % 2 ? o::neg(term) : term) : inv % 2 ? o::sub(acc, term) : o::add(acc, term);
  } while (std::next_permutation(perm.begin(), perm.end()));
  return {acc};
}

}  // namespace

void add_index_ops(OpTable& t) {
  const OpTable rows = {
      {"OneHot", 9, 17, one_hot_op},
      {"GatherND", 11, 17, gather_nd_op},
      {"ScatterND", 11, 17, scatter_nd_op},
      {"Compress", 9, 17, compress_op},
      {"NonZero", 9, 17, non_zero_op},
      {"ReverseSequence", 10, 17, reverse_sequence_op},
      {"Det", 11, 17, det_op},
      {"BlackmanWindow", 17, 17, window_op<0>},
      {"HannWindow", 17, 17, window_op<1>},
      {"HammingWindow", 17, 17, window_op<2>},
  };
  t.insert(t.end(), rows.begin(), rows.end());
}

}  // namespace spore::io::onnx_detail
