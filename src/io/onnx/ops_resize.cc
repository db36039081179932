// SPDX-License-Identifier: Apache-2.0
// ONNX Resize (opsets 11-17): nearest, linear and cubic, every coordinate transformation mode.
// With the output size known at import time (sizes, or scales and a static input shape), the
// source position of every output index is computed here, as ONNX's reference does it per
// axis: nearest becomes an index_select with a constant index, linear and cubic a weighted sum of
// 2 or 4 index_selects with constant weights. Sizes known only when the graph runs take the same
// formulas as tensor ops over the output positions (resize_axis_run_time). Axes are resized one
// after another (the modes are separable).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "io/onnx/op_context.h"
#include "io/onnx/run_time_sizes.h"
#include "spore/ops.h"

namespace spore::io::onnx_detail {

namespace {

using Ts = std::vector<Tensor>;
namespace o = spore::ops;

struct Mode {
  std::string mode, transform, nearest;
  double a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
};

// The source coordinate of output index x along an axis of `in` elements resized by `scale`
// (ONNX's reference: output_width is scale * in, not the rounded size).
double source_coord(const OpContext& c, const Mode& m, double x, double scale, int64_t in, double roi_start,
                    double roi_end) {
  const double out_w = scale * static_cast<double>(in);
  const std::string& t = m.transform;
  if (t == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (t == "pytorch_half_pixel") return out_w == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (t == "align_corners") return out_w == 1 ? 0.0 : x * static_cast<double>(in - 1) / (out_w - 1);
  if (t == "asymmetric") return x / scale;
  if (t == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (t == "tf_crop_and_resize")
    return roi_start * static_cast<double>(in - 1) +
           (out_w == 1 ? (roi_end - roi_start) * static_cast<double>(in - 1) / 2
                       : x * (roi_end - roi_start) * static_cast<double>(in - 1) / (out_w - 1));
  c.fail("coordinate_transformation_mode '" + t + "' is not one of half_pixel, pytorch_half_pixel, align_corners, "
         "asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize");
}

std::vector<double> coeffs_of(const OpContext& c, const Mode& m, double ratio, bool integer) {
  if (m.mode == "nearest") {
    if (integer) return {0, 1};
    const std::string& n = m.nearest;
    if (n == "round_prefer_floor") return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
    if (n == "round_prefer_ceil") return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (n == "floor") return {1, 0};
    if (n == "ceil") return {0, 1};
    c.fail("nearest_mode '" + n + "' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil");
  }
  if (m.mode == "linear") return {1 - ratio, ratio};
  if (m.mode == "cubic") {
    const double a = m.a, r = ratio, s = 1 - ratio;
    return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a, ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * s - (a + 3)) * s * s + 1, ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
  }
  c.fail("mode '" + m.mode + "' is not one of nearest, linear, cubic");
}

// Resizes `axis` of x to `out` elements.
Tensor resize_axis(const OpContext& c, const Mode& m, const Tensor& x, int64_t axis, int64_t out, double scale,
                   double roi_start, double roi_end) {
  const int64_t in = x.size(axis);
  if (in <= 0) c.fail("cannot resize an empty axis " + std::to_string(axis));
  const size_t taps = m.mode == "cubic" ? 4 : 2;
  const int64_t pad = static_cast<int64_t>(taps + 1) / 2;
  std::vector<std::vector<int64_t>> idx(taps, std::vector<int64_t>(static_cast<size_t>(out)));
  std::vector<std::vector<double>> w(taps, std::vector<double>(static_cast<size_t>(out)));
  std::vector<uint8_t> outside(static_cast<size_t>(out), 0);
  for (int64_t k = 0; k < out; ++k) {
    const double xo = source_coord(c, m, static_cast<double>(k), scale, in, roi_start, roi_end);
    const size_t kk = static_cast<size_t>(k);
    if (m.transform == "tf_crop_and_resize" && (xo < 0 || xo > static_cast<double>(in - 1))) outside[kk] = 1;
    const double fl = std::floor(xo);
    const bool integer = xo == fl;
    std::vector<double> cf = coeffs_of(c, m, integer ? 1.0 : xo - fl, integer);
    // The `taps` indices nearest to xo (ties to the lower) in the input edge-padded by `pad`.
    std::vector<int64_t> cand;
    for (int64_t i = -pad; i < in + pad; ++i) cand.push_back(i);
    std::stable_sort(cand.begin(), cand.end(), [&](int64_t p, int64_t q) {
      return std::abs(xo - static_cast<double>(p)) < std::abs(xo - static_cast<double>(q));
    });
    cand.resize(std::min(cand.size(), taps));
    std::sort(cand.begin(), cand.end());
    if (m.exclude_outside) {
      double sum = 0;
      for (size_t j = 0; j < taps; ++j) {
        if (cand[j] < 0 || cand[j] >= in) cf[j] = 0;
        sum += cf[j];
      }
      for (double& v : cf) v /= sum;
    }
    for (size_t j = 0; j < taps; ++j) {
      idx[j][kk] = std::clamp<int64_t>(cand[j], 0, in - 1);
      w[j][kk] = cf[j];
    }
  }
  Shape wshape(static_cast<size_t>(x.dim()), 1);
  wshape[static_cast<size_t>(axis)] = out;
  Tensor y;
  if (m.mode == "nearest") {
    std::vector<int64_t> pick(static_cast<size_t>(out));
    for (size_t k = 0; k < pick.size(); ++k) pick[k] = w[0][k] != 0 ? idx[0][k] : idx[1][k];
    y = o::index_select(x, axis, at_import([&] { return o::from_vector(pick); }));
  } else {
    for (size_t j = 0; j < taps; ++j) {
      if (std::all_of(w[j].begin(), w[j].end(), [](double v) { return v == 0; })) continue;
      Tensor ix = at_import([&] { return o::from_vector(idx[j]); });
      Tensor wt = at_import([&] { return o::cast(o::from_vector(w[j], wshape, DType::Float64), x.dtype()); });
      Tensor term = o::mul(o::index_select(x, axis, ix), wt);
      y = y.defined() ? o::add(y, term) : term;
    }
    if (!y.defined()) y = o::mul(o::index_select(x, axis, at_import([&] { return o::from_vector(idx[0]); })),
                                 at_import([&] { return o::zeros(wshape, {x.dtype()}); }));
  }
  if (std::any_of(outside.begin(), outside.end(), [](uint8_t v) { return v != 0; })) {
    std::vector<int64_t> mask(outside.begin(), outside.end());
    Tensor mk = at_import([&] { return o::cast(o::from_vector(mask, wshape, DType::Int64), DType::Bool); });
    y = o::where(mk, at_import([&] { return o::full(Shape{}, m.extrapolation, {x.dtype()}); }), y);
  }
  return y;
}

Tensor f64(double v) {
  return at_import([v] { return o::scalar_tensor(v, DType::Float64); });
}

// Resizes `axis` of x to a size known when the graph runs (`out`, 0-d int64) by `scale` (0-d
// float64; ONNX's reference measures the output as scale * in, not the rounded size), with the
// crop box `roi` (float64 [start, end]) for tf_crop_and_resize: the same source coordinates and
// taps as resize_axis, as tensor ops over the output positions. The taps are floor(xo) - 1 ...
// floor(xo) + 2 (cubic) or floor(xo), floor(xo) + 1: the nearest ones, which resize_axis picks,
// with the same weights (at an integer xo both give it weight 1).
Tensor resize_axis_run_time(const OpContext& c, const Mode& m, const Tensor& x, int64_t axis, const Tensor& out,
                            const Tensor& scale, const Tensor& roi_start, const Tensor& roi_end) {
  const int64_t in = x.size(axis);
  if (in <= 0) c.fail("cannot resize an empty axis " + std::to_string(axis));
  const Tensor pos = iota(out).first;  // (not a structured binding: lambdas below capture it)
  const Tensor k = o::cast(pos, DType::Float64), out_w = scale * static_cast<double>(in);
  const double last = static_cast<double>(in - 1);
  const std::string& t = m.transform;
  const Tensor half = o::div(k + 0.5, scale) - 0.5;
  Tensor xo;
  if (t == "half_pixel") xo = half;
  else if (t == "pytorch_half_pixel") xo = o::where(o::equal(out_w, f64(1)), f64(-0.5), half);
  else if (t == "align_corners") xo = o::where(o::equal(out_w, f64(1)), f64(0), o::div(k * static_cast<double>(in - 1), out_w - 1.0));
  else if (t == "asymmetric") xo = o::div(k, scale);
  else if (t == "tf_half_pixel_for_nn") xo = o::div(k + 0.5, scale);
  else if (t == "tf_crop_and_resize") {
    const Tensor box = (roi_end - roi_start) * last;
    xo = roi_start * last + o::where(o::equal(out_w, f64(1)), box * 0.5, o::div(k * box, out_w - 1.0));
  } else {
    (void)source_coord(c, m, 0, 1, in, 0, 1);  // names the unknown mode
  }
  // tf_crop_and_resize: positions outside the input take the extrapolation value.
  auto extrapolated = [&](const Tensor& y) {
    if (t != "tf_crop_and_resize") return y;
    Shape along(static_cast<size_t>(x.dim()), 1);
    along[static_cast<size_t>(axis)] = pos.size(0);
    const Tensor outside = o::reshape(o::logical_or(o::less(xo, f64(0)), o::greater(xo, f64(last))), along);
    return o::where(outside, o::cast(f64(m.extrapolation), x.dtype()), y);
  };
  const Tensor fl = o::floor(xo), ratio = xo - fl;
  auto index = [&](const Tensor& tap) { return o::cast(o::minimum(o::maximum(tap, f64(0)), f64(last)), DType::Int64); };
  Shape along(static_cast<size_t>(x.dim()), 1);
  along[static_cast<size_t>(axis)] = pos.size(0);
  auto weight = [&](const Tensor& w) { return o::cast(o::reshape(w, along), x.dtype()); };
  if (m.mode == "nearest") {
    const std::string& n = m.nearest;
    Tensor src = fl;
    if (n == "round_prefer_floor") src = o::where(o::greater(ratio, f64(0.5)), fl + 1.0, fl);
    else if (n == "round_prefer_ceil") src = o::where(o::greater_equal(ratio, f64(0.5)), fl + 1.0, fl);
    else if (n == "ceil") src = o::ceil(xo);
    else if (n != "floor") (void)coeffs_of(c, m, 0.5, false);  // names the unknown mode
    return extrapolated(o::index_select(x, axis, index(src)));
  }
  std::vector<Tensor> taps, ws;
  if (m.mode == "linear") {
    taps = {fl, fl + 1.0};
    ws = {o::sub(f64(1), ratio), ratio};
  } else if (m.mode == "cubic") {
    const double a = m.a;
    const Tensor r = ratio, q = o::sub(f64(1), ratio);
    auto outer = [a](const Tensor& d) { return ((d * a - 5 * a) * d + 8 * a) * d - 4 * a; };  // |d| in [1, 2]
    auto inner = [a](const Tensor& d) { return (d * (a + 2) - (a + 3)) * d * d + 1.0; };      // |d| in [0, 1]
    taps = {fl - 1.0, fl, fl + 1.0, fl + 2.0};
    ws = {outer(r + 1.0), inner(r), inner(q), outer(q + 1.0)};
  } else {
    (void)coeffs_of(c, m, 0.5, false);  // names the unknown mode
  }
  if (m.exclude_outside) {
    // Taps outside the input weigh nothing; the rest are scaled to sum to 1.
    Tensor sum;
    for (size_t j = 0; j < taps.size(); ++j) {
      const Tensor inside = o::logical_and(o::greater_equal(taps[j], f64(0)), o::less_equal(taps[j], f64(last)));
      ws[j] = o::where(inside, ws[j], f64(0));
      sum = sum.defined() ? o::add(sum, ws[j]) : ws[j];
    }
    for (Tensor& w : ws) w = o::div(w, sum);
  }
  Tensor y;
  for (size_t j = 0; j < taps.size(); ++j) {
    const Tensor term = o::mul(o::index_select(x, axis, index(taps[j])), weight(ws[j]));
    y = y.defined() ? o::add(y, term) : term;
  }
  return extrapolated(y);
}

Ts resize_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  for (Dim d : x.shape())
    if (is_symbolic(d)) c.fail("needs a static input shape, got " + shape_str(x.shape()));
  Mode m;
  m.mode = c.s("mode", "nearest");
  m.transform = c.s("coordinate_transformation_mode", "half_pixel");
  m.nearest = c.s("nearest_mode", "round_prefer_floor");
  m.a = c.f("cubic_coeff_a", -0.75);
  m.exclude_outside = c.i("exclude_outside", 0) != 0;
  m.extrapolation = c.f("extrapolation_value", 0.0);
  if (m.mode != "nearest" && !is_floating(x.dtype()))
    c.fail(m.mode + " resize needs a floating input, got " + std::string(dtype_name(x.dtype())));
  const size_t r = static_cast<size_t>(x.dim());
  std::vector<int64_t> sizes(r);
  std::vector<double> scales(r);
  const bool crop = m.transform == "tf_crop_and_resize";
  if ((c.has(3) && !c.is_constant(3)) || (!c.has(3) && c.has(2) && !c.is_constant(2)) || (crop && !c.is_constant(1))) {
    // Sizes, scales or the crop box known when the graph runs: each axis's length is a value
    // symbol (run_time_sizes.h), the coordinates tensor ops.
    const bool by_sizes = c.has(3);
    const Tensor& given = c.in(by_sizes ? 3 : 2);
    if (given.dim() != 1 || given.size(0) != static_cast<Dim>(r) || is_integral(given.dtype()) != by_sizes)
      c.fail(std::string(by_sizes ? "sizes must be an integer" : "scales must be a float") + " tensor of shape (" +
             std::to_string(r) + ",), got " + std::string(dtype_name(given.dtype())) + shape_str(given.shape()));
    Tensor roi;
    if (crop) {
      roi = o::cast(c.in(1), DType::Float64);
      if (roi.dim() != 1 || roi.size(0) != static_cast<Dim>(2 * r)) c.fail("roi must have shape (" + std::to_string(2 * r) + ",), got " + shape_str(roi.shape()));
    }
    Tensor y = x;
    for (size_t k = 0; k < r; ++k) {
      const auto a = static_cast<int64_t>(k);
      const Tensor g = o::select(given, 0, a);
      const double in = static_cast<double>(x.size(a));
      // ONNX: sizes give scale = size / in; scales give size = floor(in * scale).
      const Tensor out = by_sizes ? o::cast(g, DType::Int64) : o::cast(o::floor(o::cast(g, DType::Float64) * in), DType::Int64);
      const Tensor scale = by_sizes ? o::cast(g, DType::Float64) / in : o::cast(g, DType::Float64);
      y = resize_axis_run_time(c, m, y, a, out, scale, crop ? o::select(roi, 0, a) : f64(0), crop ? o::select(roi, 0, a + static_cast<int64_t>(r)) : f64(1));
    }
    return {y};
  }
  if (c.has(3)) {
    sizes = c.ints_of(3);
    if (sizes.size() != r) c.fail("sizes has " + std::to_string(sizes.size()) + " entries for rank " + std::to_string(r));
    for (size_t k = 0; k < r; ++k) scales[k] = static_cast<double>(sizes[k]) / static_cast<double>(x.size(static_cast<int64_t>(k)));
  } else if (c.has(2)) {
    scales = c.doubles_of(2);
    if (scales.size() != r) c.fail("scales has " + std::to_string(scales.size()) + " entries for rank " + std::to_string(r));
    for (size_t k = 0; k < r; ++k) {
      if (!(scales[k] > 0)) c.fail("scales must be positive");
      sizes[k] = static_cast<int64_t>(std::floor(static_cast<double>(x.size(static_cast<int64_t>(k))) * scales[k]));
    }
  } else {
    c.fail("needs scales or sizes");
  }
  std::vector<double> roi;
  if (m.transform == "tf_crop_and_resize") {
    roi = c.doubles_of(1);
    if (roi.size() != 2 * r) c.fail("roi has " + std::to_string(roi.size()) + " entries for rank " + std::to_string(r));
  }
  Tensor y = x;
  for (size_t k = 0; k < r; ++k) {
    const bool crop = !roi.empty();
    if (!crop && sizes[k] == x.size(static_cast<int64_t>(k)) && scales[k] == 1.0) continue;
    y = resize_axis(c, m, y, static_cast<int64_t>(k), sizes[k], scales[k], crop ? roi[k] : 0, crop ? roi[k + r] : 1);
  }
  return {y};
}

}  // namespace

void add_resize_ops(OpTable& t) { t.push_back({"Resize", 11, 17, resize_op}); }

}  // namespace spore::io::onnx_detail
