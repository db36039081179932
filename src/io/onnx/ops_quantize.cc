// SPDX-License-Identifier: Apache-2.0
// ONNX linear quantization: QuantizeLinear, DequantizeLinear (per tensor or per axis) and
// DynamicQuantizeLinear, written with elementwise ops. Rounding is half to even (round), and
// quantized values saturate to the range of the zero point's dtype (uint8 or int8).
#include "io/onnx/op_context.h"
#include "spore/ops.h"

namespace spore::io::onnx_detail {

namespace {

using Ts = std::vector<Tensor>;
namespace o = spore::ops;

// A per-axis scale or zero point (1-D) reshaped to broadcast along `axis` of x.
Tensor along(const OpContext& c, const Tensor& p, const Tensor& x) {
  if (p.dim() == 0 || numel_of(p.shape()) == 1) return o::reshape(p, Shape{});
  if (p.dim() != 1) c.fail("a scale or zero point must be a scalar or 1-D, got " + shape_str(p.shape()));
  const int64_t axis = axis_of(c, c.i("axis", 1), x.dim());
  if (p.size(0) != x.size(axis))
    c.fail("a per-axis scale or zero point has " + std::to_string(p.size(0)) + " entries for axis " +
           std::to_string(axis) + " of size " + std::to_string(x.size(axis)));
  Shape s(static_cast<size_t>(x.dim()), 1);
  s[static_cast<size_t>(axis)] = p.size(0);
  return o::reshape(p, s);
}

std::pair<double, double> range_of(const OpContext& c, DType dt) {
  if (dt == DType::UInt8) return {0, 255};
  if (dt == DType::Int8) return {-128, 127};
  c.fail("quantized values must be uint8 or int8, got " + std::string(dtype_name(dt)));
}

Tensor quantize(const OpContext& c, const Tensor& x, const Tensor& scale, const Tensor& zp, DType out) {
  auto [lo, hi] = range_of(c, out);
  Tensor q = o::round(o::div(o::cast(x, DType::Float32), o::cast(scale, DType::Float32)));
  if (zp.defined()) q = o::add(q, o::cast(zp, DType::Float32));
  return o::cast(o::clamp(q, lo, hi), out);
}

Ts quantize_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const Tensor scale = along(c, c.in(1), x);
  const Tensor zp = c.has(2) ? along(c, c.in(2), x) : Tensor{};
  return {quantize(c, x, scale, zp, c.has(2) ? c.in(2).dtype() : DType::UInt8)};
}

Ts dequantize_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const Tensor scale = along(c, c.in(1), x);
  Tensor v = o::cast(x, DType::Float32);
  if (c.has(2)) v = o::sub(v, o::cast(along(c, c.in(2), x), DType::Float32));
  return {o::mul(v, o::cast(scale, DType::Float32))};
}

Ts dynamic_quantize_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  Tensor zero = o::scalar_tensor(0.0, DType::Float32);
  Tensor xmax = o::maximum(o::amax(x), zero), xmin = o::minimum(o::amin(x), zero);
  Tensor scale = o::div(o::sub(xmax, xmin), o::scalar_tensor(255.0, DType::Float32));
  Tensor zp = o::cast(o::clamp(o::round(o::sub(zero, o::div(xmin, scale))), 0.0, 255.0), DType::UInt8);
  return {quantize(c, x, scale, zp, DType::UInt8), scale, zp};
}

}  // namespace

void add_quantize_ops(OpTable& t) {
  const OpTable rows = {
      {"QuantizeLinear", 10, 17, quantize_op},
      {"DequantizeLinear", 10, 17, dequantize_op},
      {"DynamicQuantizeLinear", 11, 17, dynamic_quantize_op},
  };
  t.insert(t.end(), rows.begin(), rows.end());
}

}  // namespace spore::io::onnx_detail
