// SPDX-License-Identifier: Apache-2.0
// ONNX shape and indexing operators. Inputs that carry shapes or indices of a shape (Reshape's
// shape, Slice's starts, Expand's shape...) must be known at import time; the importer folds
// everything computed from initializers, Constants and static dims (Shape of a static tensor).
#include <algorithm>
#include <limits>
#include <numeric>

#include "core/attrs.h"
#include "io/onnx/op_context.h"
#include "io/onnx/proto_tensor.h"
#include "io/onnx/run_time_sizes.h"
#include "spore/ops.h"

namespace spore::io::onnx_detail {

namespace {

using Ts = std::vector<Tensor>;
namespace o = spore::ops;

Ts identity_op(const OpContext& c) { return {c.in(0)}; }

Ts reshape_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  if (c.opset() >= 5 && !c.is_constant(1)) return run_time_reshape(c);
  std::vector<int64_t> s = c.opset() < 5 ? c.ints("shape").value_or(std::vector<int64_t>{}) : c.ints_of(1);
  const bool allow_zero = c.i("allowzero", 0) != 0;
  Shape out;
  int infer = -1;
  Dim known = 1;
  for (size_t k = 0; k < s.size(); ++k) {
    Dim d = s[k];
    if (d == 0 && !allow_zero) {
      if (static_cast<int64_t>(k) >= x.dim()) c.fail("shape entry 0 at position " + std::to_string(k) + " has no input dim to copy");
      d = x.shape()[k];
    }
    if (d == -1) {
      if (infer >= 0) c.fail("shape has more than one -1");
      infer = static_cast<int>(k);
      out.push_back(1);
      continue;
    }
    if (d < -1 && !is_symbol_id(d)) c.fail("invalid shape entry " + std::to_string(d));
    out.push_back(d);
    known = dim_mul(known, d);
  }
  if (infer >= 0) {
    const Dim n = numel_of(x.shape());
    if (!is_symbolic(n) && !is_symbolic(known) && (known == 0 || n % known != 0))
      c.fail("cannot reshape " + shape_str(x.shape()) + " to " + shape_str(out) + " (with -1 inferred)");
    out[static_cast<size_t>(infer)] = dim_floordiv(n, known);
  }
  return {o::reshape(x, out)};
}

Ts flatten_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t r = x.dim();
  int64_t axis = c.i("axis", 1);
  if (axis < -r || axis > r) c.fail("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  Shape s{1, 1};
  for (int64_t k = 0; k < r; ++k) s[k < axis ? 0 : 1] = dim_mul(s[k < axis ? 0 : 1], x.shape()[static_cast<size_t>(k)]);
  // reshape takes sizes, not symbols: a symbolic group (the batch) is the -1 it infers.
  if (is_symbolic(s[0]) && is_symbolic(s[1])) c.fail("both groups of dimensions around axis " + std::to_string(axis) + " are symbolic");
  for (Dim& d : s)
    if (is_symbolic(d)) d = -1;
  return {o::reshape(x, s)};
}

Ts transpose_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> perm = c.ints("perm").value_or(std::vector<int64_t>{});
  if (perm.empty())
    for (int64_t k = x.dim() - 1; k >= 0; --k) perm.push_back(k);
  if (static_cast<int64_t>(perm.size()) != x.dim()) c.fail("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(x.dim()));
  return {o::permute(x, perm)};
}

std::vector<int64_t> axes_arg(const OpContext& c, size_t input) {
  if (c.opset() >= 13) return c.has(input) ? c.ints_of(input) : std::vector<int64_t>{};
  return c.ints("axes").value_or(std::vector<int64_t>{});
}

Ts squeeze_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> axes = axes_arg(c, 1);
  for (auto& a : axes) a = axis_of(c, a, x.dim());
  if (axes.empty())
    for (int64_t k = 0; k < x.dim(); ++k)
      if (x.shape()[static_cast<size_t>(k)] == 1) axes.push_back(k);
  std::sort(axes.rbegin(), axes.rend());
  Tensor y = x;
  for (int64_t a : axes) {
    if (y.shape()[static_cast<size_t>(a)] != 1) c.fail("cannot squeeze axis " + std::to_string(a) + " of shape " + shape_str(x.shape()));
    y = o::squeeze(y, a);
  }
  return {y};
}

Ts unsqueeze_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> axes = axes_arg(c, 1);
  const int64_t r = x.dim() + static_cast<int64_t>(axes.size());
  for (auto& a : axes) a = axis_of(c, a, r);
  std::sort(axes.begin(), axes.end());
  Tensor y = x;
  for (int64_t a : axes) y = o::unsqueeze(y, a);
  return {y};
}

Ts concat_op(const OpContext& c) {
  std::vector<Tensor> xs;
  for (size_t k = 0; k < c.num_inputs(); ++k) xs.push_back(c.in(k));
  if (xs.empty()) c.fail("needs at least one input");
  return {o::concat(xs, axis_of(c, c.i("axis", 0), xs[0].dim()))};
}

Ts split_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t axis = axis_of(c, c.i("axis", 0), x.dim());
  if (c.opset() >= 13 && c.has(1) && !c.is_constant(1)) return run_time_split(c, axis);
  std::vector<int64_t> sizes = c.opset() >= 13 ? (c.has(1) ? c.ints_of(1) : std::vector<int64_t>{})
                                               : c.ints("split").value_or(std::vector<int64_t>{});
  const int64_t n = c.node().output_size();
  if (sizes.empty()) {
    const Dim d = x.size(axis);
    if (n <= 0 || d % n != 0) c.fail("cannot split size " + std::to_string(d) + " into " + std::to_string(n) + " equal parts");
    sizes.assign(static_cast<size_t>(n), d / n);
  }
  return o::split(x, sizes, axis);
}

Ts slice_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset() < 10) {
    starts = c.ints("starts").value_or(starts);
    ends = c.ints("ends").value_or(ends);
    axes = c.ints("axes").value_or(axes);
  } else {
    for (size_t i = 1; i <= 4; ++i)
      if (c.has(i) && !c.is_constant(i)) return run_time_slice(c);
    starts = c.ints_of(1);
    ends = c.ints_of(2);
    if (c.has(3)) axes = c.ints_of(3);
    if (c.has(4)) steps = c.ints_of(4);
  }
  if (ends.size() != starts.size()) c.fail("starts and ends differ in length");
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) c.fail("starts, ends, axes and steps differ in length");
  // An axis of symbolic size (a batch, a size that values give) cannot be clamped here: the whole
  // of it stays as it is, any other slice of it is computed when the graph runs.
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = axis_of(c, axes[k], x.dim());
    if (!is_symbolic(x.size(a))) continue;
    const bool whole = steps[k] == 1 && starts[k] == 0 && ends[k] >= std::numeric_limits<int32_t>::max();
    if (!whole) {
      if (c.opset() < 10) c.fail("slices the symbolic axis " + std::to_string(a) + " of " + shape_str(x.shape()) + " (opset < 10)");
      return run_time_slice(c);
    }
  }
  Tensor y = x;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = axis_of(c, axes[k], x.dim());
    if (is_symbolic(x.size(a))) continue;  // the whole axis (above)
    const int64_t d = x.size(a), s = steps[k];
    if (s == 0) c.fail("step 0");
    int64_t b = starts[k], e = ends[k];
    if (b < 0) b += d;
    if (e < 0) e += d;
    if (s > 0) {
      b = std::clamp<int64_t>(b, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      y = o::slice(y, a, b, std::max(b, e), s);
    } else {
      b = std::clamp<int64_t>(b, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      // Walk the reversed axis forward: index i is d-1-i there.
      const int64_t fb = d - 1 - b, fe = d - 1 - e;
      y = d == 0 ? y : o::slice(o::flip(y, {a}), a, fb, std::max(fb, fe), -s);
    }
  }
  return {y};
}

Tensor normalize_index(const Tensor& idx, Dim d) {
  Tensor i = o::cast(idx, DType::Int64);
  return o::where(o::less(i, o::zeros_like(i)), o::add(i, o::full_like(i, d)), i);
}

Ts gather_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t axis = axis_of(c, c.i("axis", 0), x.dim());
  const Tensor& idx = c.in(1);
  Tensor flat = o::reshape(normalize_index(idx, x.size(axis)), {numel_of(idx.shape())});
  Tensor g = o::index_select(x, axis, flat);
  Shape s;
  for (int64_t k = 0; k < axis; ++k) s.push_back(x.shape()[static_cast<size_t>(k)]);
  for (Dim d : idx.shape()) s.push_back(d);
  for (int64_t k = axis + 1; k < x.dim(); ++k) s.push_back(x.shape()[static_cast<size_t>(k)]);
  return {o::reshape(g, s)};
}

Ts gather_elements_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t axis = axis_of(c, c.i("axis", 0), x.dim());
  return {o::gather(x, axis, normalize_index(c.in(1), x.size(axis)))};
}

Ts scatter_elements_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t axis = axis_of(c, c.i("axis", 0), x.dim());
  const std::string red = c.s("reduction", "none");
  Tensor idx = normalize_index(c.in(1), x.size(axis));
  if (red == "none") return {o::scatter(x, axis, idx, c.in(2))};
  if (red == "add") return {o::scatter_add(x, axis, idx, c.in(2))};
  c.fail("reduction '" + red + "' is not supported");
}

Ts topk_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t axis = axis_of(c, c.i("axis", -1), x.dim());
  if (c.opset() >= 11 && !c.i("sorted", 1)) c.fail("sorted=0 is not supported");
  const bool largest = c.i("largest", 1) != 0;
  if (c.opset() >= 10 && !c.is_constant(1)) {
    // k known when the graph runs: the output's size along the axis is a value symbol.
    if (c.in(1).numel() != 1) c.fail("k must hold one value, got shape " + shape_str(c.in(1).shape()));
    auto [v, i] = o::topk(x, c.in(1), axis, largest);
    return {v, i};
  }
  const int64_t k = c.opset() >= 10 ? c.int_scalar(1) : c.i("k", 0);
  auto [v, i] = o::topk(x, k, axis, largest);
  return {v, i};
}

Ts expand_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  if (!c.is_constant(1)) return run_time_expand(c);
  Shape target;
  for (int64_t d : c.ints_of(1)) target.push_back(d);
  return {o::broadcast_to(x, broadcast_shapes(x.shape(), target, "Expand"))};
}

Ts tile_op(const OpContext& c) {
  if (!c.is_constant(1)) return run_time_tile(c);
  return {o::tile(c.in(0), c.ints_of(1))};
}

Ts shape_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t r = x.dim();
  int64_t b = c.i("start", 0), e = c.i("end", r);
  if (b < 0) b += r;
  if (e < 0) e += r;
  b = std::clamp<int64_t>(b, 0, r);
  e = std::clamp<int64_t>(e, b, r);
  // Sizes that values give are read when the graph runs (shape_of: its edge from x keeps their
  // binding alive).
  for (int64_t k = b; k < e; ++k)
    if (is_value_size(x.shape()[static_cast<size_t>(k)])) return {o::slice(shape_tensor(x), 0, b, e)};
  // Otherwise a constant even for a traced input: its symbolic sizes (the batch) are int64
  // values that Reshape, Expand and the shape arithmetic above take as symbolic dimensions (an
  // op that would compute with them as numbers gets them as run-time values: importer.cc).
  std::vector<int64_t> dims(x.shape().begin() + b, x.shape().begin() + e);
  return {at_import([&] { return o::from_vector(dims, {static_cast<Dim>(dims.size())}, DType::Int64); })};
}

Ts size_op(const OpContext& c) {
  for (Dim d : c.in(0).shape())
    if (is_symbolic(d)) return {o::prod(shape_tensor(c.in(0)))};  // known when the graph runs
  return {o::scalar_tensor(c.in(0).numel(), DType::Int64)};
}

Scalar scalar_of(const Tensor& t) {
  if (t.dtype() == DType::Float32 || t.dtype() == DType::Float64 || t.dtype() == DType::Float16 || t.dtype() == DType::BFloat16)
    return t.item<double>();
  if (t.dtype() == DType::Bool) return t.item<bool>();
  return t.item<int64_t>();
}

Ts constant_of_shape_op(const OpContext& c) {
  if (!c.is_constant(0)) {
    auto v = c.tensor("value");
    if (v && v->numel() != 1) c.fail("value must hold one element");
    const Tensor value = v ? *v : at_import([] { return o::scalar_tensor(0.0, DType::Float32); });
    return run_time_constant_of_shape(c, value);
  }
  Shape s;
  for (int64_t d : c.ints_of(0)) {
    if (d < 0) c.fail("negative dimension " + std::to_string(d));
    s.push_back(d);
  }
  auto v = c.tensor("value");
  if (!v) return {o::zeros(s, {DType::Float32})};
  if (v->numel() != 1) c.fail("value must hold one element");
  return {o::full(s, scalar_of(*v), {v->dtype()})};
}

Ts constant_op(const OpContext& c) {
  if (auto t = c.tensor("value")) return {*t};
  if (const auto* a = c.attr("value_float")) return {o::scalar_tensor(static_cast<double>(a->f()), DType::Float32)};
  if (const auto* a = c.attr("value_int")) return {o::scalar_tensor(a->i(), DType::Int64)};
  if (auto f = c.floats("value_floats")) {
    std::vector<float> v(f->begin(), f->end());
    return {o::from_vector(v, {static_cast<Dim>(v.size())}, DType::Float32)};
  }
  if (auto i = c.ints("value_ints")) return {o::from_vector(*i, {static_cast<Dim>(i->size())}, DType::Int64)};
  c.fail("has no supported value attribute (value, value_float(s), value_int(s)); sparse and string values are not supported");
}

Ts range_op(const OpContext& c) {
  if (!c.is_constant(0) || !c.is_constant(1) || !c.is_constant(2)) return run_time_range(c);
  const Tensor& s = c.in(0);
  const DType dt = s.dtype();
  if (dt == DType::Float32 || dt == DType::Float64) {
    const double b = c.double_scalar(0), e = c.double_scalar(1), d = c.double_scalar(2);
    if (d == 0) c.fail("delta is 0");
    return {o::arange(b, e, d, {dt})};
  }
  const int64_t b = c.int_scalar(0), e = c.int_scalar(1), d = c.int_scalar(2);
  if (d == 0) c.fail("delta is 0");
  return {o::arange(b, e, d, {dt})};
}

Ts pad_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> pads;
  double value = 0;
  if (c.opset() < 11) {
    pads = c.ints("pads").value_or(pads);
    value = c.f("value", 0.0);
  } else {
    if (!c.is_constant(1)) {
      const std::string mode = c.s("mode", "constant");
      if (mode != "constant" && mode != "edge" && mode != "reflect") c.fail("mode '" + mode + "' is not supported");
      const Tensor v = c.has(2) ? o::reshape(c.in(2), Shape{}) : at_import([] { return o::scalar_tensor(0.0, DType::Float64); });
      return run_time_pad(c, mode, v);
    }
    pads = c.ints_of(1);
    if (c.has(2) && c.is_constant(2)) value = c.double_scalar(2);
  }
  const int64_t r = x.dim();
  if (static_cast<int64_t>(pads.size()) != 2 * r) c.fail("pads has " + std::to_string(pads.size()) + " entries for rank " + std::to_string(r));
  std::vector<int64_t> ours;
  for (int64_t a = r - 1; a >= 0; --a) {
    ours.push_back(pads[static_cast<size_t>(a)]);
    ours.push_back(pads[static_cast<size_t>(a + r)]);
  }
  const std::string mode = c.s("mode", "constant");
  o::PadMode m = o::PadMode::Constant;
  if (mode == "reflect") m = o::PadMode::Reflect;
  else if (mode == "edge") m = o::PadMode::Replicate;
  else if (mode != "constant") c.fail("mode '" + mode + "' is not supported");
  if (c.opset() >= 11 && c.has(2) && !c.is_constant(2)) {
    // A run-time pad value: pad with 0, then add value where the mask of padded cells is 1.
    if (m != o::PadMode::Constant) c.fail("constant_value is only used by mode 'constant'");
    Tensor mask = o::pad(o::zeros_like(x), ours, o::PadMode::Constant, 1.0);
    return {o::add(o::pad(x, ours), o::mul(mask, o::reshape(c.in(2), {})))};
  }
  return {o::pad(x, ours, m, value)};
}

Ts trilu_op(const OpContext& c) {
  const bool upper = c.i("upper", 1) != 0;
  if (c.has(1) && !c.is_constant(1)) {
    // A diagonal known when the graph runs: keep (i, j) with j - i >= k (upper) or <= k.
    const Tensor& x = c.in(0);
    if (x.dim() < 2) c.fail("needs rank >= 2, got " + shape_str(x.shape()));
    const Dim n = x.size(-2), m = x.size(-1);
    if (is_symbolic(n) || is_symbolic(m)) c.fail("needs static sizes of the last two axes with a run-time k, got " + shape_str(x.shape()));
    if (c.in(1).numel() != 1) c.fail("k must hold one value, got shape " + shape_str(c.in(1).shape()));
    const Tensor diff = at_import([&] {
      return o::sub(o::reshape(o::arange(0, m, 1, {DType::Int64}), Shape{1, m}), o::reshape(o::arange(0, n, 1, {DType::Int64}), Shape{n, 1}));
    });
    const Tensor k = o::reshape(o::cast(c.in(1), DType::Int64), Shape{});
    const Tensor keep = upper ? o::greater_equal(diff, k) : o::less_equal(diff, k);
    return {o::where(keep, x, o::zeros_like(x))};
  }
  const int64_t k = c.has(1) ? c.int_scalar(1) : 0;
  return {upper ? o::triu(c.in(0), k) : o::tril(c.in(0), k)};
}

Ts depth_to_space_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  if (x.dim() != 4) c.fail("needs a 4-D input, got " + shape_str(x.shape()));
  const int64_t b = c.i("blocksize", 0);
  const Dim n = x.size(0), ch = x.size(1), h = x.size(2), w = x.size(3);
  if (b <= 0 || ch % (b * b) != 0) c.fail("channels " + std::to_string(ch) + " not divisible by blocksize^2");
  const bool crd = c.s("mode", "DCR") == "CRD";
  Tensor y = crd ? o::permute(o::reshape(x, {n, ch / (b * b), b, b, h, w}), {0, 1, 4, 2, 5, 3})
                 : o::permute(o::reshape(x, {n, b, b, ch / (b * b), h, w}), {0, 3, 4, 1, 5, 2});
  return {o::reshape(y, {n, ch / (b * b), h * b, w * b})};
}

Ts space_to_depth_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  if (x.dim() != 4) c.fail("needs a 4-D input, got " + shape_str(x.shape()));
  const int64_t b = c.i("blocksize", 0);
  const Dim n = x.size(0), ch = x.size(1), h = x.size(2), w = x.size(3);
  if (b <= 0 || h % b != 0 || w % b != 0) c.fail("spatial dims not divisible by blocksize");
  Tensor y = o::permute(o::reshape(x, {n, ch, h / b, b, w / b, b}), {0, 3, 5, 1, 2, 4});
  return {o::reshape(y, {n, ch * b * b, h / b, w / b})};
}

Ts eye_like_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  if (x.dim() != 2) c.fail("needs a 2-D input");
  DType dt = x.dtype();
  if (const auto* a = c.attr("dtype")) {
    const auto d = dtype_from_onnx(static_cast<int32_t>(a->i()));
    if (!d) c.fail("dtype " + onnx_dtype_name(static_cast<int32_t>(a->i())) + " is not supported");
    dt = *d;
  }
  const int64_t k = c.i("k", 0);
  Tensor rows = o::reshape(o::arange(0, x.size(0), 1, {DType::Int64}), {x.size(0), 1});
  Tensor cols = o::reshape(o::arange(0, x.size(1), 1, {DType::Int64}), {1, x.size(1)});
  return {o::cast(o::equal(o::sub(cols, rows), o::full_like(cols, k)), dt)};
}

Ts einsum_op(const OpContext& c) {
  std::vector<Tensor> xs;
  for (size_t k = 0; k < c.num_inputs(); ++k) xs.push_back(c.in(k));
  return {o::einsum(c.s("equation", ""), xs)};
}

}  // namespace

void add_shape_ops(OpTable& t) {
  const OpTable rows = {
      {"Identity", 1, 17, identity_op},      {"Reshape", 5, 17, reshape_op},
      {"Flatten", 1, 17, flatten_op},        {"Transpose", 1, 17, transpose_op},
      {"Squeeze", 1, 17, squeeze_op},        {"Unsqueeze", 1, 17, unsqueeze_op},
      {"Concat", 4, 17, concat_op},          {"Split", 2, 17, split_op},
      {"Slice", 1, 17, slice_op},            {"Gather", 1, 17, gather_op},
      {"GatherElements", 11, 17, gather_elements_op},
      {"ScatterElements", 11, 17, scatter_elements_op},
      {"Scatter", 9, 10, scatter_elements_op},
      {"TopK", 1, 17, topk_op},
      {"Expand", 8, 17, expand_op},          {"Tile", 6, 17, tile_op},
      {"Shape", 1, 17, shape_op},            {"Size", 1, 17, size_op},
      {"ConstantOfShape", 9, 17, constant_of_shape_op},
      {"Constant", 1, 17, constant_op},      {"Range", 11, 17, range_op},
      {"Pad", 2, 17, pad_op},                {"Trilu", 14, 17, trilu_op},
      {"DepthToSpace", 1, 17, depth_to_space_op},
      {"SpaceToDepth", 1, 17, space_to_depth_op},
      {"EyeLike", 9, 17, eye_like_op},       {"Einsum", 12, 17, einsum_op},
  };
  t.insert(t.end(), rows.begin(), rows.end());
}

}  // namespace spore::io::onnx_detail
