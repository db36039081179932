// SPDX-License-Identifier: Apache-2.0
// Export of the neural-network primitives: matmul (Gemm for plain 2-D layers), convolutions,
// pools, normalizations (inference), softmax, resize and dropout. PyTorch-style pooling
// (ceil_mode dropping a window that would start in the padding) is written with explicit end
// padding and ceil_mode=0, so every ONNX runtime computes the same window layout.
#include <algorithm>

#include "io/onnx/export_context.h"
#include "prims/batch_norm.h"
#include "prims/conv.h"
#include "prims/dropout.h"
#include "prims/group_norm.h"
#include "prims/interpolate.h"
#include "prims/layer_norm.h"
#include "prims/matmul.h"
#include "prims/pool.h"
#include "prims/rms_norm.h"
#include "prims/softmax.h"
#include "spore/ops.h"
#include "transforms/ir_bridge.h"

namespace spore::io::onnx_detail {

namespace {

using ir::DType;

std::vector<int64_t> vec(const prims::IntList& v) { return {v.begin(), v.end()}; }

std::vector<int64_t> swap_last_two(size_t rank) {
  std::vector<int64_t> p;
  for (size_t k = 0; k < rank; ++k) p.push_back(static_cast<int64_t>(k));
  std::swap(p[rank - 1], p[rank - 2]);
  return p;
}

void matmul(ExportContext& c) {
  const auto& a = c.attrs<prims::MatmulAttrs>();
  const bool bias = c.num_inputs() == 3 && a.beta != 0.0;  // beta 0 ignores the bias, NaN included
  const size_t ra = c.in_type(0).shape.size(), rb = c.in_type(1).shape.size();
  const DType dt = c.out_type(0).dtype;
  const bool gemm_type = dt == DType::Float32 || dt == DType::Float64 || dt == DType::Float16 || dt == DType::BFloat16;
  if (ra == 2 && rb == 2 && gemm_type) {
    std::vector<std::string> ins{c.in(0), c.in(1)};
    if (bias) ins.push_back(c.in(2));
    auto& n = c.add("Gemm", ins, {c.out(0)});
    if (a.trans_a) attr_i(n, "transA", 1);
    if (a.trans_b) attr_i(n, "transB", 1);
    if (a.alpha != 1.0) attr_f(n, "alpha", a.alpha);
    if (bias && a.beta != 1.0) attr_f(n, "beta", a.beta);
    return;
  }
  std::string x = c.in(0), w = c.in(1);
  if (a.trans_a) attr_ints(c.add("Transpose", {x}, {x = c.tmp("a_t")}), "perm", swap_last_two(ra));
  if (a.trans_b) attr_ints(c.add("Transpose", {w}, {w = c.tmp("b_t")}), "perm", swap_last_two(rb));
  const bool scale = a.alpha != 1.0;
  if (!scale && !bias) {
    c.add("MatMul", {x, w}, {c.out(0)});
    return;
  }
  std::string y = c.op("MatMul", {x, w}, "matmul");
  if (!bias) {
    c.add("Mul", {y, c.scalar(a.alpha, dt, "alpha")}, {c.out(0)});
    return;
  }
  if (scale) y = c.op("Mul", {y, c.scalar(a.alpha, dt, "alpha")}, "scaled");
  std::string b = a.beta == 1.0 ? c.in(2) : c.op("Mul", {c.in(2), c.scalar(a.beta, dt, "beta")}, "beta_bias");
  c.add("Add", {y, b}, {c.out(0)});
}

std::vector<int64_t> kernel_of(ExportContext& c) {
  auto w = c.static_shape(c.in_type(1), "the weight");
  return {w.begin() + 2, w.end()};
}

void conv(ExportContext& c) {
  const auto& a = c.attrs<prims::ConvAttrs>();
  std::vector<std::string> ins{c.in(0), c.in(1)};
  if (c.num_inputs() == 3) ins.push_back(c.in(2));
  auto& n = c.add("Conv", ins, {c.out(0)});
  std::vector<int64_t> pads = vec(a.pad_l);
  for (int64_t p : a.pad_r) pads.push_back(p);
  attr_ints(n, "kernel_shape", kernel_of(c));
  attr_ints(n, "strides", vec(a.stride));
  attr_ints(n, "pads", pads);
  attr_ints(n, "dilations", vec(a.dilation));
  attr_i(n, "group", a.groups);
}

void conv_transpose(ExportContext& c) {
  const auto& a = c.attrs<prims::ConvTransposeAttrs>();
  std::vector<std::string> ins{c.in(0), c.in(1)};
  if (c.num_inputs() == 3) ins.push_back(c.in(2));
  auto& n = c.add("ConvTranspose", ins, {c.out(0)});
  std::vector<int64_t> pads = vec(a.padding);
  for (int64_t p : a.padding) pads.push_back(p);
  attr_ints(n, "kernel_shape", kernel_of(c));
  attr_ints(n, "strides", vec(a.stride));
  attr_ints(n, "pads", pads);
  attr_ints(n, "output_padding", vec(a.output_padding));
  attr_ints(n, "dilations", vec(a.dilation));
  attr_i(n, "group", a.groups);
}

void pool2d(ExportContext& c) {
  const auto& a = c.attrs<prims::Pool2dAttrs>();
  const bool max = a.kind == prims::PoolKind::Max;
  std::vector<int64_t> begin = vec(a.padding), end = vec(a.padding);
  bool ceil = a.ceil_mode;
  const auto& xs = c.in_type(0).shape;
  const auto& ys = c.out_type(0).shape;
  if (ceil && xs[2].is_const() && xs[3].is_const() && ys[2].is_const() && ys[3].is_const()) {
    // The end padding that makes floor mode give our (PyTorch's) output size.
    std::vector<int64_t> ends(2);
    bool exact = true;
    for (size_t i = 0; i < 2; ++i) {
      const int64_t in = xs[2 + i].value(), o = ys[2 + i].value(), k = a.kernel[i], s = a.stride[i];
      const int64_t lo = (o - 1) * s + k - in - begin[i];
      ends[i] = std::clamp(end[i], lo, lo + s - 1);
      // Averages that count padding would count the extra end padding too.
      if (ends[i] < 0 || (!max && a.count_include_pad && ends[i] > end[i])) exact = false;
    }
    if (exact) {
      end = ends;
      ceil = false;
    }
  }
  std::vector<int64_t> pads{begin[0], begin[1], end[0], end[1]};
  auto& n = c.add(max ? "MaxPool" : "AveragePool", {c.in(0)}, {c.out(0)});
  attr_ints(n, "kernel_shape", vec(a.kernel));
  attr_ints(n, "strides", vec(a.stride));
  attr_ints(n, "pads", pads);
  if (ceil) attr_i(n, "ceil_mode", 1);
  if (!max && a.count_include_pad) attr_i(n, "count_include_pad", 1);
}

void adaptive_avg_pool2d(ExportContext& c) {
  const auto& a = c.attrs<prims::AdaptivePool2dAttrs>();
  if (a.output_size[0] == 1 && a.output_size[1] == 1) {
    c.add("GlobalAveragePool", {c.in(0)}, {c.out(0)});
    return;
  }
  // Equal windows when the output size divides the input: a plain average pool.
  const auto& xs = c.in_type(0).shape;
  std::vector<int64_t> k(2);
  for (size_t i = 0; i < 2; ++i) {
    const int64_t o = a.output_size[i];
    if (!xs[2 + i].is_const() || xs[2 + i].value() % o != 0)
      c.fail("adaptive average pooling to " + std::to_string(a.output_size[0]) + "x" + std::to_string(a.output_size[1]) +
             " from " + xs[2].str() + "x" + xs[3].str() +
             " has unequal windows, which ONNX cannot express (it can when the output is 1x1 or divides the input)");
    k[i] = xs[2 + i].value() / o;
  }
  auto& n = c.add("AveragePool", {c.in(0)}, {c.out(0)});
  attr_ints(n, "kernel_shape", k);
  attr_ints(n, "strides", k);
}

// A per-channel constant of ones or zeros for optional affine inputs ONNX requires.
std::string filled(ExportContext& c, int64_t n, double v, DType dt, const std::string& what) {
  return c.tensor(ops::full({n}, v, {transforms::from_ir(dt)}), what);
}

int64_t channels(ExportContext& c) {
  const auto& d = c.in_type(0).shape.at(1);
  if (!d.is_const()) c.fail("the channel dimension is symbolic ('" + d.str() + "'); ONNX needs a fixed channel count here");
  return d.value();
}

void batch_norm(ExportContext& c) {
  const auto& a = c.attrs<prims::BatchNormAttrs>();
  if (a.training || !a.has_running)
    c.fail("batch_norm in training mode (batch statistics) cannot be exported; put the model in eval mode (cell.eval()) "
           "so it uses the running statistics");
  size_t i = 1;
  const DType dt = c.in_type(0).dtype;
  std::string w = a.has_weight ? c.in(i++) : filled(c, channels(c), 1, dt, "scale");
  std::string b = a.has_bias ? c.in(i++) : filled(c, channels(c), 0, dt, "bias");
  const std::string mean = c.in(i), var = c.in(i + 1);
  attr_f(c.add("BatchNormalization", {c.in(0), w, b, mean, var}, {c.out(0)}), "epsilon", a.eps);
  // In inference the statistics used are the running ones.
  c.alias(1, mean);
  c.alias(2, var);
}

// Squeezes keepdims statistics (x.shape[:axis] + ones) to x.shape[:axis].
void stats_out(ExportContext& c, size_t i, const std::string& kept, int64_t axis, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t k = axis; k < rank; ++k) axes.push_back(k);
  if (axes.empty()) c.add("Identity", {kept}, {c.out(i)});
  else c.add("Squeeze", {kept, c.ints(axes, "stat_axes")}, {c.out(i)});
}

void layer_norm(ExportContext& c) {
  const auto& a = c.attrs<prims::LayerNormAttrs>();
  const auto& xt = c.in_type(0);
  const int64_t rank = static_cast<int64_t>(xt.shape.size());
  std::string w;
  if (a.has_weight) {
    w = c.in(1);
  } else {
    Shape s;
    for (int64_t k = a.axis; k < rank; ++k) s.push_back(c.static_shape(xt, "the normalized shape")[static_cast<size_t>(k)]);
    w = c.tensor(ops::ones(s, {transforms::from_ir(xt.dtype)}), "scale");
  }
  std::vector<std::string> ins{c.in(0), w};
  if (a.has_bias) ins.push_back(c.in(a.has_weight ? 2 : 1));
  const bool stats = c.used(1) || c.used(2);
  std::vector<std::string> outs{c.out(0)};
  if (stats) outs.push_back(c.tmp("mean")), outs.push_back(c.tmp("inv_std"));
  auto& n = c.add("LayerNormalization", ins, outs);
  attr_i(n, "axis", a.axis);
  attr_f(n, "epsilon", a.eps);
  if (stats) {
    stats_out(c, 1, outs[1], a.axis, rank);
    stats_out(c, 2, outs[2], a.axis, rank);
  }
}

// x * rsqrt(mean over the trailing axes + eps), in ONNX ops.
std::string reduce_mean(ExportContext& c, const std::string& x, const std::vector<int64_t>& axes, const std::string& what) {
  auto& n = c.add("ReduceMean", {x}, {c.tmp(what)});
  attr_ints(n, "axes", axes);
  attr_i(n, "keepdims", 1);
  return n.output(0);
}

void rms_norm(ExportContext& c) {
  const auto& a = c.attrs<prims::RmsNormAttrs>();
  const auto& xt = c.in_type(0);
  const int64_t rank = static_cast<int64_t>(xt.shape.size());
  std::vector<int64_t> axes;
  for (int64_t k = a.axis; k < rank; ++k) axes.push_back(k);
  const std::string x = c.in(0);
  std::string ms = reduce_mean(c, c.op("Mul", {x, x}, "square"), axes, "mean_square");
  std::string r = c.op("Reciprocal", {c.op("Sqrt", {c.op("Add", {ms, c.scalar(a.eps, xt.dtype, "eps")}, "plus_eps")}, "rms")}, "inv_rms");
  if (a.has_weight) c.add("Mul", {c.op("Mul", {x, r}, "normalized"), c.in(1)}, {c.out(0)});
  else c.add("Mul", {x, r}, {c.out(0)});
  if (c.used(1)) {
    if (c.out_type(1).dtype != xt.dtype) c.fail("rms_norm's statistics output in another dtype is not exportable");
    stats_out(c, 1, r, a.axis, rank);
  }
}

void group_norm(ExportContext& c) {
  const auto& a = c.attrs<prims::GroupNormAttrs>();
  const auto& xt = c.in_type(0);
  const size_t rank = xt.shape.size();
  const std::string x = c.in(0);
  // (N, C, *) -> (N, G, C/G * prod(*)), normalize over the last axis, back to x's shape.
  std::string xr = c.op("Reshape", {x, c.ints({0, a.groups, -1}, "grouped_shape")}, "grouped");
  std::string m = reduce_mean(c, xr, {2}, "mean");
  std::string d = c.op("Sub", {xr, m}, "centered");
  std::string var = reduce_mean(c, c.op("Mul", {d, d}, "sq"), {2}, "var");
  std::string sd = c.op("Sqrt", {c.op("Add", {var, c.scalar(a.eps, xt.dtype, "eps")}, "plus_eps")}, "std");
  std::string y = c.op("Reshape", {c.op("Div", {d, sd}, "normalized"), c.op("Shape", {x}, "x_shape")}, "ungrouped");
  std::vector<int64_t> affine(rank - 1, 1);
  affine[0] = -1;  // weight and bias (C) broadcast as (C, 1, ..., 1)
  size_t i = 1;
  const bool last_is_weight = !a.has_bias;
  if (a.has_weight) {
    std::string w = c.op("Reshape", {c.in(i++), c.ints(affine, "affine_shape")}, "weight");
    if (last_is_weight) c.add("Mul", {y, w}, {c.out(0)});
    else y = c.op("Mul", {y, w}, "scaled");
  }
  if (a.has_bias) c.add("Add", {y, c.op("Reshape", {c.in(i), c.ints(affine, "affine_shape")}, "bias")}, {c.out(0)});
  if (!a.has_weight && !a.has_bias) c.add("Identity", {y}, {c.out(0)});
  if (c.used(1)) c.add("Squeeze", {m, c.ints({2}, "stat_axis")}, {c.out(1)});
  if (c.used(2)) c.add("Squeeze", {c.op("Reciprocal", {sd}, "inv_std"), c.ints({2}, "stat_axis")}, {c.out(2)});
}

void softmax_like(ExportContext& c, const char* op) {
  attr_i(c.add(op, {c.in(0)}, {c.out(0)}), "axis", c.attrs<prims::SoftmaxAttrs>().axis);
}
void softmax(ExportContext& c) { softmax_like(c, "Softmax"); }
void log_softmax(ExportContext& c) { softmax_like(c, "LogSoftmax"); }

void interpolate(ExportContext& c) {
  const auto& a = c.attrs<prims::InterpolateAttrs>();
  const auto& xs = c.in_type(0).shape;
  std::string sizes;
  if (xs[0].is_const() && xs[1].is_const()) {
    sizes = c.ints({xs[0].value(), xs[1].value(), a.out_h, a.out_w}, "sizes");
  } else {
    std::string nc = c.op("Slice", {c.op("Shape", {c.in(0)}, "x_shape"), c.ints({0}, "zero"), c.ints({2}, "two")}, "batch_channels");
    auto& cat = c.add("Concat", {nc, c.ints({a.out_h, a.out_w}, "out_hw")}, {c.tmp("sizes")});
    attr_i(cat, "axis", 0);
    sizes = cat.output(0);
  }
  auto& n = c.add("Resize", {c.in(0), "", "", sizes}, {c.out(0)});
  if (!a.bilinear) {
    // PyTorch's 'nearest': src = floor(dst * in / out).
    attr_s(n, "mode", "nearest");
    attr_s(n, "coordinate_transformation_mode", "asymmetric");
    attr_s(n, "nearest_mode", "floor");
  } else {
    attr_s(n, "mode", "linear");
    attr_s(n, "coordinate_transformation_mode", a.align_corners ? "align_corners" : "pytorch_half_pixel");
  }
}

void dropout(ExportContext& c) {
  const auto& a = c.attrs<prims::DropoutAttrs>();
  if (a.p != 0.0)
    c.fail("dropout with p=" + std::to_string(a.p) + " is active, i.e. the graph was traced in training mode; put the "
           "model in eval mode (cell.eval()), where dropout is the identity, before exporting");
  c.add("Identity", {c.in(0)}, {c.out(0)});
}

}  // namespace

void add_nn_exports(ExportTable& t) {
  const ExportTable rows = {
      {"matmul", matmul},         {"conv", conv},
      {"conv_transpose", conv_transpose}, {"pool2d", pool2d},
      {"adaptive_avg_pool2d", adaptive_avg_pool2d},
      {"batch_norm", batch_norm}, {"layer_norm", layer_norm},
      {"rms_norm", rms_norm},     {"group_norm", group_norm},
      {"softmax", softmax},       {"log_softmax", log_softmax},
      {"interpolate", interpolate}, {"dropout", dropout},
  };
  t.insert(rows.begin(), rows.end());
}

}  // namespace spore::io::onnx_detail
