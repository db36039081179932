// SPDX-License-Identifier: Apache-2.0
// ONNX neural-network operators: MatMul/Gemm, convolutions, pools and normalizations (inference
// semantics). ONNX allows asymmetric and auto padding where our ops take symmetric padding, so
// those cases pad the input explicitly (or crop a transposed convolution's output).
#include <cmath>
#include <limits>

#include "io/onnx/op_context.h"
#include "spore/ops.h"

namespace spore::io::onnx_detail {

namespace {

using Ts = std::vector<Tensor>;
namespace o = spore::ops;
Tensor lit(double v) { return o::weak_scalar(v); }

Ts matmul_op(const OpContext& c) { return {o::matmul(c.in(0), c.in(1))}; }

Ts gemm_op(const OpContext& c) {
  Tensor a = c.in(0), b = c.in(1);
  if (c.i("transA", 0)) a = o::transpose(a, 0, 1);
  if (c.i("transB", 0)) b = o::transpose(b, 0, 1);
  Tensor y = o::matmul(a, b);
  const double alpha = c.f("alpha", 1.0), beta = c.f("beta", 1.0);
  if (alpha != 1.0) y = o::mul(y, lit(alpha));
  if (c.has(2)) y = o::add(y, beta == 1.0 ? c.in(2) : o::mul(c.in(2), lit(beta)));
  return {y};
}

// Spatial padding per dim (begin, end) from pads / auto_pad. `kernel` is the dilated extent.
struct Pads {
  std::vector<int64_t> begin, end;
  bool symmetric() const { return begin == end; }
  bool any() const {
    for (size_t i = 0; i < begin.size(); ++i)
      if (begin[i] || end[i]) return true;
    return false;
  }
};
Pads spatial_pads(const OpContext& c, const Tensor& x, const std::vector<int64_t>& kernel,
                  const std::vector<int64_t>& strides) {
  const size_t n = kernel.size();
  Pads p{std::vector<int64_t>(n, 0), std::vector<int64_t>(n, 0)};
  const std::string ap = c.s("auto_pad", "NOTSET");
  if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
    for (size_t i = 0; i < n; ++i) {
      const int64_t in = x.size(static_cast<int64_t>(i) + 2), s = strides[i];
      const int64_t out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + kernel[i] - in);
      p.begin[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      p.end[i] = total - p.begin[i];
    }
  } else if (ap == "NOTSET") {
    if (auto pads = c.ints("pads")) {
      if (pads->size() != 2 * n) c.fail("pads has " + std::to_string(pads->size()) + " entries for " + std::to_string(n) + " spatial dims");
      for (size_t i = 0; i < n; ++i) p.begin[i] = (*pads)[i], p.end[i] = (*pads)[i + n];
    }
  } else if (ap != "VALID") {
    c.fail("auto_pad '" + ap + "' is not supported");
  }
  return p;
}

// Pads the spatial dims of x explicitly with `value`.
Tensor pad_spatial(const Tensor& x, const Pads& p, double value) {
  std::vector<int64_t> ours;
  for (size_t i = p.begin.size(); i-- > 0;) {
    ours.push_back(p.begin[i]);
    ours.push_back(p.end[i]);
  }
  return o::pad(x, ours, o::PadMode::Constant, value);
}

std::vector<int64_t> attr_or(const OpContext& c, const char* name, size_t n, int64_t def) {
  auto v = c.ints(name).value_or(std::vector<int64_t>(n, def));
  if (v.size() != n) c.fail(std::string(name) + " has " + std::to_string(v.size()) + " entries for " + std::to_string(n) + " spatial dims");
  return v;
}

Ts conv_op(const OpContext& c) {
  const Tensor &x = c.in(0), &w = c.in(1);
  const Tensor b = c.has(2) ? c.in(2) : Tensor();
  const size_t n = static_cast<size_t>(w.dim() - 2);
  if (x.dim() != w.dim() || n < 1 || n > 3) c.fail("input " + shape_str(x.shape()) + " and weight " + shape_str(w.shape()) + " must both be 3-D, 4-D or 5-D");
  o::ConvOptions opt;
  opt.stride = attr_or(c, "strides", n, 1);
  opt.dilation = attr_or(c, "dilations", n, 1);
  opt.groups = c.i("group", 1);
  std::vector<int64_t> k;
  for (size_t i = 0; i < n; ++i) k.push_back((w.size(static_cast<int64_t>(i) + 2) - 1) * opt.dilation[i] + 1);
  Pads p = spatial_pads(c, x, k, opt.stride);
  Tensor xin = x;
  if (p.symmetric()) {
    opt.padding = p.begin;
  } else {
    xin = pad_spatial(x, p, 0.0);
    opt.padding.assign(n, 0);
  }
  if (n == 1) return {o::conv1d(xin, w, b, opt)};
  if (n == 2) return {o::conv2d(xin, w, b, opt)};
  return {o::conv3d(xin, w, b, opt)};
}

Ts conv_transpose_op(const OpContext& c) {
  Tensor x = c.in(0), w = c.in(1);
  const Tensor b = c.has(2) ? c.in(2) : Tensor();
  const bool one_d = x.dim() == 3;
  if (one_d) x = o::unsqueeze(x, 2), w = o::unsqueeze(w, 2);
  if (x.dim() != 4 || w.dim() != 4) c.fail("only 1-D and 2-D transposed convolutions are supported, got input " + shape_str(c.in(0).shape()));
  const size_t n = one_d ? 1 : 2;
  auto widen = [&](std::vector<int64_t> v, int64_t fill) {
    if (one_d) v.insert(v.begin(), fill);
    return v;
  };
  o::ConvOptions opt;
  opt.stride = widen(attr_or(c, "strides", n, 1), 1);
  opt.dilation = widen(attr_or(c, "dilations", n, 1), 1);
  opt.groups = c.i("group", 1);
  std::vector<int64_t> out_pad = widen(attr_or(c, "output_padding", n, 0), 0);
  opt.padding = {0, 0};
  std::vector<int64_t> begin(2, 0), end(2, 0);
  const std::string ap = c.s("auto_pad", "NOTSET");
  auto out_shape = c.ints("output_shape");
  for (size_t i = 0; i < 2; ++i) {
    const int64_t in = x.size(static_cast<int64_t>(i) + 2), s = opt.stride[i];
    const int64_t full = (in - 1) * s + (w.size(static_cast<int64_t>(i) + 2) - 1) * opt.dilation[i] + 1 + out_pad[i];
    int64_t target = -1;
    if (out_shape) target = widen(*out_shape, 1).at(i + (out_shape->size() > n ? 2 : 0));
    else if (ap == "SAME_UPPER" || ap == "SAME_LOWER") target = in * s;
    if (target >= 0) {
      const int64_t total = full - target;
      if (total < 0) c.fail("output_shape is larger than the full transposed convolution");
      const bool upper = ap == "SAME_UPPER";
      begin[i] = upper ? total / 2 : total - total / 2;
      end[i] = total - begin[i];
    } else if (auto pads = c.ints("pads")) {
      if (pads->size() != 2 * n) c.fail("pads has the wrong length");
      auto pw = widen(std::vector<int64_t>(pads->begin(), pads->begin() + static_cast<long>(n)), 0);
      auto pe = widen(std::vector<int64_t>(pads->begin() + static_cast<long>(n), pads->end()), 0);
      begin[i] = pw[i], end[i] = pe[i];
    }
  }
  // Output padding larger than the stride is legal in ONNX: pad the full result instead.
  std::vector<int64_t> extra(2, 0);
  for (size_t i = 0; i < 2; ++i)
    if (out_pad[i] >= opt.stride[i] && out_pad[i] >= opt.dilation[i]) extra[i] = out_pad[i], out_pad[i] = 0;
  Tensor y = o::conv_transpose2d(x, w, Tensor(), opt, out_pad);
  if (extra[0] || extra[1]) y = o::pad(y, {0, extra[1], 0, extra[0]});
  for (size_t i = 0; i < 2; ++i)
    if (begin[i] || end[i]) y = o::slice(y, static_cast<int64_t>(i) + 2, begin[i], y.size(static_cast<int64_t>(i) + 2) - end[i]);
  if (b.defined()) y = o::add(y, o::reshape(b, {b.numel(), 1, 1}));
  if (one_d) y = o::squeeze(y, 2);
  return {y};
}

// Any-rank pool with dilations, as the max (or sum) of one strided slice per kernel offset:
// used where our 2-D pool primitives do not reach (3-D pools, dilated windows).
template <bool kMax>
Tensor window_pool(const OpContext& c, const Tensor& x, const std::vector<int64_t>& kernel) {
  const size_t n = kernel.size();
  const auto strides = attr_or(c, "strides", n, 1), dil = attr_or(c, "dilations", n, 1);
  if (c.i("ceil_mode", 0)) c.fail("ceil_mode with dilations or 3-D windows is not supported");
  for (Dim d : x.shape())
    if (is_symbolic(d)) c.fail("needs a static input shape, got " + shape_str(x.shape()));
  std::vector<int64_t> ext(n);
  for (size_t i = 0; i < n; ++i) ext[i] = (kernel[i] - 1) * dil[i] + 1;
  const Pads p = spatial_pads(c, x, ext, strides);
  const Tensor xp = p.any() ? pad_spatial(x, p, kMax ? -std::numeric_limits<double>::infinity() : 0.0) : x;
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i] = (xp.size(static_cast<int64_t>(i) + 2) - ext[i]) / strides[i] + 1;
    if (out[i] < 1) c.fail("the window is larger than the padded input " + shape_str(xp.shape()));
  }
  auto windows = [&](const Tensor& src, bool take_max) {
    Tensor acc;
    std::vector<int64_t> off(n, 0);
    for (;;) {
      Tensor s = src;
      for (size_t i = 0; i < n; ++i) {
        const int64_t start = off[i] * dil[i];
        s = o::slice(s, static_cast<int64_t>(i) + 2, start, start + (out[i] - 1) * strides[i] + 1, strides[i]);
      }
      acc = !acc.defined() ? s : take_max ? o::maximum(acc, s) : o::add(acc, s);
      size_t i = n;
      while (i-- > 0 && ++off[i] == kernel[i]) off[i] = 0;
      if (i == static_cast<size_t>(-1)) break;
    }
    return acc;
  };
  if (kMax) return windows(xp, true);
  Tensor sum = windows(xp, false);
  if (c.i("count_include_pad", 0) != 0 || !p.any()) {
    int64_t count = 1;
    for (int64_t k : kernel) count *= k;
    return o::div(sum, lit(static_cast<double>(count)));
  }
  Shape one(static_cast<size_t>(x.dim()), 1);
  for (size_t i = 0; i < n; ++i) one[i + 2] = x.size(static_cast<int64_t>(i) + 2);
  Tensor ones = at_import([&] { return o::ones(one, {x.dtype()}); });
  return o::div(sum, windows(pad_spatial(ones, p, 0.0), false));
}

template <bool kMax>
Ts pool_op(const OpContext& c) {
  Tensor x = c.in(0);
  {
    auto kernel = c.ints("kernel_shape");
    if (!kernel) c.fail("kernel_shape is required");
    bool dilated = false;
    for (int64_t d : attr_or(c, "dilations", kernel->size(), 1)) dilated = dilated || d != 1;
    const bool has_indices = c.node().output_size() > 1 && !c.node().output(1).empty();
    if ((x.dim() == 5 || dilated) && !has_indices && is_floating(x.dtype()))
      return {window_pool<kMax>(c, x, *kernel)};
  }
  const bool one_d = x.dim() == 3;
  if (one_d) x = o::unsqueeze(x, 2);
  if (x.dim() != 4) c.fail("only 1-D and 2-D pools are supported, got input " + shape_str(c.in(0).shape()));
  auto kernel = c.ints("kernel_shape");
  if (!kernel) c.fail("kernel_shape is required");
  const size_t n = kernel->size();
  if (n != (one_d ? 1u : 2u)) c.fail("kernel_shape does not match the input rank");
  for (int64_t d : attr_or(c, "dilations", n, 1))
    if (d != 1) c.fail("dilations other than 1 are not supported");
  auto widen = [&](std::vector<int64_t> v, int64_t fill) {
    if (one_d) v.insert(v.begin(), fill);
    return v;
  };
  o::PoolOptions opt;
  opt.kernel = widen(*kernel, 1);
  opt.stride = widen(attr_or(c, "strides", n, 1), 1);
  opt.ceil_mode = c.i("ceil_mode", 0) != 0;
  Pads p = spatial_pads(c, one_d ? o::squeeze(x, 2) : x, *kernel, attr_or(c, "strides", n, 1));
  p.begin = widen(p.begin, 0);
  p.end = widen(p.end, 0);
  const bool fits = p.symmetric() && 2 * p.begin[0] <= opt.kernel[0] && 2 * p.begin[1] <= opt.kernel[1];
  Tensor y;
  if (kMax && c.node().output_size() > 1 && !c.node().output(1).empty()) {
    // Indices: flat positions in the whole input (n, c, h, w), row-major (storage_order 0).
    if (!fits || one_d) c.fail("the Indices output needs a 2-D pool with symmetric padding of at most half the kernel");
    if (x.dim() != 4 || is_symbolic(x.shape()[0]) || is_symbolic(x.shape()[1]) || is_symbolic(x.shape()[2]) ||
        is_symbolic(x.shape()[3]))
      c.fail("the Indices output needs a static (N, C, H, W) input, got " + shape_str(x.shape()));
    opt.padding = p.begin;
    auto [v, idx] = o::max_pool2d_with_indices(x, opt);
    const int64_t plane = x.size(2) * x.size(3), planes = x.size(0) * x.size(1);
    Tensor base = at_import([&] {
      return o::reshape(o::arange(0, planes * plane, plane, {DType::Int64}), Shape{x.size(0), x.size(1), 1, 1});
    });
    Tensor in_plane = o::cast(idx, DType::Int64);
    if (c.i("storage_order", 0) != 0) {  // column-major: w * H + h
      Tensor h = o::floor_divide(in_plane, o::full_like(in_plane, x.size(3)));
      Tensor w = o::sub(in_plane, o::mul(h, o::full_like(h, x.size(3))));
      in_plane = o::add(o::mul(w, o::full_like(w, x.size(2))), h);
    }
    return {v, o::add(in_plane, base)};
  }
  if (kMax && !is_floating(x.dtype())) {
    // Integer pools (uint8 images): exact through float64, padding by the dtype's lowest value.
    Tensor xf = o::cast(x, DType::Float64);
    if (fits) {
      opt.padding = p.begin;
      y = o::max_pool2d(xf, opt);
    } else {
      opt.padding = {0, 0};
      y = o::max_pool2d(pad_spatial(xf, p, -std::numeric_limits<double>::infinity()), opt);
    }
    y = o::cast(y, x.dtype());
  } else if (kMax) {
    if (fits) {
      opt.padding = p.begin;
      y = o::max_pool2d(x, opt);
    } else {
      opt.padding = {0, 0};
      y = o::max_pool2d(pad_spatial(x, p, -std::numeric_limits<double>::infinity()), opt);
    }
  } else {
    const bool include = c.i("count_include_pad", 0) != 0;
    if (fits) {
      opt.padding = p.begin;
      opt.count_include_pad = include;
      y = o::avg_pool2d(x, opt);
    } else {
      // Sum of the window over the count of real (or padded, when included) elements.
      opt.padding = {0, 0};
      opt.count_include_pad = true;
      Tensor sum = o::avg_pool2d(pad_spatial(x, p, 0.0), opt);
      if (!include) {
        Tensor ones = o::ones_like(o::slice(o::slice(x, 0, 0, 1), 1, 0, 1));
        sum = o::div(sum, o::avg_pool2d(pad_spatial(ones, p, 0.0), opt));
      }
      y = sum;
    }
  }
  if (one_d) y = o::squeeze(y, 2);
  return {y};
}

o::Axes spatial_axes(const Tensor& x) {
  o::Axes a;
  for (int64_t k = 2; k < x.dim(); ++k) a.push_back(k);
  return a;
}
Ts global_avg_op(const OpContext& c) { return {o::mean(c.in(0), spatial_axes(c.in(0)), true)}; }
Ts global_max_op(const OpContext& c) { return {o::amax(c.in(0), spatial_axes(c.in(0)), true)}; }

// A per-channel vector (C) shaped to broadcast against x (N, C, ...).
Tensor per_channel(const Tensor& v, const Tensor& x) {
  Shape s(static_cast<size_t>(x.dim() - 1), 1);
  s[0] = v.numel();
  return o::reshape(v, s);
}

Ts batch_norm_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const double eps = c.f("epsilon", 1e-5);
  if (c.i("training_mode", 0)) {
    // Batch statistics (biased variance) normalize; the running ones blend in by momentum.
    const double mom = c.f("momentum", 0.9);
    o::Axes ax{0};
    for (int64_t k = 2; k < x.dim(); ++k) ax.push_back(k);
    Tensor mean = o::mean(x, ax, false);
    Tensor var = o::mean(o::square(o::sub(x, per_channel(mean, x))), ax, false);
    Tensor inv = o::rsqrt(o::add(per_channel(var, x), lit(eps)));
    Tensor y = o::add(o::mul(o::sub(x, per_channel(mean, x)), o::mul(inv, per_channel(c.in(1), x))), per_channel(c.in(2), x));
    Tensor rm = o::add(o::mul(c.in(3), lit(mom)), o::mul(mean, lit(1 - mom)));
    Tensor rv = o::add(o::mul(c.in(4), lit(mom)), o::mul(var, lit(1 - mom)));
    return {y, rm, rv};
  }
  Tensor inv = o::rsqrt(o::add(per_channel(c.in(4), x), lit(eps)));
  Tensor y = o::mul(o::sub(x, per_channel(c.in(3), x)), o::mul(inv, per_channel(c.in(1), x)));
  return {o::add(y, per_channel(c.in(2), x))};
}

Ts instance_norm_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const auto axes = spatial_axes(x);
  Tensor m = o::mean(x, axes, true);
  Tensor v = o::mean(o::square(o::sub(x, m)), axes, true);
  Tensor y = o::mul(o::sub(x, m), o::rsqrt(o::add(v, lit(c.f("epsilon", 1e-5)))));
  return {o::add(o::mul(y, per_channel(c.in(1), x)), per_channel(c.in(2), x))};
}

Ts layer_norm_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t axis = axis_of(c, c.i("axis", -1), x.dim());
  o::Axes axes;
  for (int64_t k = axis; k < x.dim(); ++k) axes.push_back(k);
  Tensor m = o::mean(x, axes, true);
  Tensor d = o::sub(x, m);
  Tensor inv = o::rsqrt(o::add(o::mean(o::square(d), axes, true), lit(c.f("epsilon", 1e-5))));
  Tensor y = o::mul(o::mul(d, inv), c.in(1));
  if (c.has(2)) y = o::add(y, c.in(2));
  return {y, m, inv};
}

Ts mvn_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  o::Axes axes = c.ints("axes").value_or(o::Axes{0, 2, 3});
  for (auto& a : axes) a = axis_of(c, a, x.dim());
  Tensor m = o::mean(x, axes, true);
  Tensor sd = o::sqrt(o::sub(o::mean(o::square(x), axes, true), o::square(m)));
  return {o::div(o::sub(x, m), o::add(sd, lit(1e-9)))};
}

Ts lrn_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t size = c.i("size", 0);
  if (size <= 0 || x.dim() < 3) c.fail("needs size > 0 and an input of rank >= 3");
  const double alpha = c.f("alpha", 1e-4), beta = c.f("beta", 0.75), bias = c.f("bias", 1.0);
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo, ch = x.size(1);
  std::vector<int64_t> pads(static_cast<size_t>(2 * x.dim()), 0);
  pads[static_cast<size_t>(2 * (x.dim() - 2))] = lo;
  pads[static_cast<size_t>(2 * (x.dim() - 2) + 1)] = hi;
  Tensor sq = o::pad(o::square(x), pads);
  Tensor acc = o::slice(sq, 1, 0, ch);
  for (int64_t k = 1; k < size; ++k) acc = o::add(acc, o::slice(sq, 1, k, k + ch));
  return {o::div(x, o::pow(o::add(o::mul(acc, lit(alpha / static_cast<double>(size))), lit(bias)), lit(beta)))};
}

Ts dropout_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  if (c.opset() >= 12 && c.has(2)) {
    if (!c.is_constant(2)) c.fail("training_mode must be known at import time");
    const double ratio = c.has(1) && c.is_constant(1) ? c.double_scalar(1) : (c.has(1) ? -1.0 : 0.5);
    if (c.int_scalar(2) && ratio != 0.0) c.fail("training_mode=true is not supported (inference only)");
  }
  return {x, o::ones_like(o::cast(x, DType::Bool))};
}

}  // namespace

void add_nn_ops(OpTable& t) {
  const OpTable rows = {
      {"MatMul", 1, 17, matmul_op},
      {"Gemm", 7, 17, gemm_op},
      {"Conv", 1, 17, conv_op},
      {"ConvTranspose", 1, 17, conv_transpose_op},
      {"MaxPool", 1, 17, pool_op<true>},
      {"AveragePool", 1, 17, pool_op<false>},
      {"GlobalAveragePool", 1, 17, global_avg_op},
      {"GlobalMaxPool", 1, 17, global_max_op},
      {"BatchNormalization", 7, 17, batch_norm_op},
      {"InstanceNormalization", 1, 17, instance_norm_op},
      {"LayerNormalization", 17, 17, layer_norm_op},
      {"MeanVarianceNormalization", 9, 17, mvn_op},
      {"LRN", 1, 17, lrn_op},
      {"Dropout", 7, 17, dropout_op},
  };
  t.insert(t.end(), rows.begin(), rows.end());
}

}  // namespace spore::io::onnx_detail
