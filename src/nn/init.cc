// SPDX-License-Identifier: Apache-2.0
#include "spore/nn/init.h"

#include <cmath>

#include "spore/ops.h"

namespace spore::nn::init {

double calculate_gain(Nonlinearity nl, double param) {
  switch (nl) {
    case Nonlinearity::Linear:
    case Nonlinearity::Conv:
    case Nonlinearity::Sigmoid: return 1.0;
    case Nonlinearity::Tanh: return 5.0 / 3.0;
    case Nonlinearity::ReLU: return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU: return std::sqrt(2.0 / (1.0 + param * param));
    case Nonlinearity::SELU: return 0.75;
  }
  return 1.0;
}

std::pair<int64_t, int64_t> fan_in_and_fan_out(const Shape& shape) {
  SPORE_CHECK(shape.size() >= 2, "[nn.init] fan in and fan out need a tensor of at least 2 dimensions, got shape ",
              shape_str(shape), "; use uniform/normal for biases and vectors");
  int64_t receptive = 1;
  for (size_t i = 2; i < shape.size(); ++i) receptive *= shape[i];
  return {shape[1] * receptive, shape[0] * receptive};
}

namespace {
int64_t fan(const Shape& shape, FanMode mode) {
  auto [in, out] = fan_in_and_fan_out(shape);
  const int64_t f = mode == FanMode::FanIn ? in : out;
  SPORE_CHECK(f > 0, "[nn.init] kaiming init of shape ", shape_str(shape), " has a zero fan; nothing to scale by");
  return f;
}
thread_local Device t_device = kCPU;
ops::TensorOptions opts(DType dtype) {
  SPORE_CHECK(is_floating(dtype), "[nn.init] initializers make floating tensors, got ", dtype_name(dtype));
  return {dtype, t_device};
}
bool on_meta() { return t_device.type == DeviceType::Meta; }
}  // namespace

DeviceScope::DeviceScope(Device device) : previous_(t_device) { t_device = device; }
DeviceScope::~DeviceScope() { t_device = previous_; }
Device current_device() { return t_device; }

Tensor empty(const Shape& shape, DType dtype) { return ops::empty(shape, opts(dtype)); }
Tensor zeros(const Shape& shape, DType dtype) { return ops::zeros(shape, opts(dtype)); }
Tensor ones(const Shape& shape, DType dtype) { return ops::ones(shape, opts(dtype)); }
Tensor constant(const Shape& shape, double value, DType dtype) { return ops::full(shape, value, opts(dtype)); }
Tensor uniform(const Shape& shape, double low, double high, DType dtype) {
  if (on_meta()) return ops::empty(shape, opts(dtype));  // shapes only: no draw moves the generator
  return ops::uniform(shape, low, high, opts(dtype));
}
Tensor normal(const Shape& shape, double mean, double std, DType dtype) {
  if (on_meta()) return ops::empty(shape, opts(dtype));
  return ops::normal(shape, mean, std, opts(dtype));
}
Tensor trunc_normal(const Shape& shape, double mean, double std, double a, double b, DType dtype) {
  SPORE_CHECK(std > 0 && a < b, "[nn.init.trunc_normal] needs std > 0 and a < b, got std ", std, ", [", a, ", ", b, "]");
  if (on_meta()) return ops::empty(shape, opts(dtype));
  return ops::truncated_normal(shape, mean, std, a, b, opts(dtype));
}
Tensor xavier_uniform(const Shape& shape, double gain, DType dtype) {
  auto [in, out] = fan_in_and_fan_out(shape);
  const double bound = gain * std::sqrt(6.0 / static_cast<double>(in + out));
  return uniform(shape, -bound, bound, dtype);
}
Tensor xavier_normal(const Shape& shape, double gain, DType dtype) {
  auto [in, out] = fan_in_and_fan_out(shape);
  return normal(shape, 0.0, gain * std::sqrt(2.0 / static_cast<double>(in + out)), dtype);
}
Tensor kaiming_uniform(const Shape& shape, double a, FanMode mode, Nonlinearity nl, DType dtype) {
  const double bound = calculate_gain(nl, a) * std::sqrt(3.0 / static_cast<double>(fan(shape, mode)));
  return uniform(shape, -bound, bound, dtype);
}
Tensor kaiming_normal(const Shape& shape, double a, FanMode mode, Nonlinearity nl, DType dtype) {
  return normal(shape, 0.0, calculate_gain(nl, a) / std::sqrt(static_cast<double>(fan(shape, mode))), dtype);
}

namespace {
// The in-place forms draw on the tensor's own device, whatever scope is open (the scope says
// where new tensors go). A meta tensor has no memory: it gets nothing and draws nothing, so a
// model's own init code run under a meta scope moves the generator no more than its layers do.
template <class Make>
void refill(Tensor& t, const char* name, Make&& make) {
  SPORE_CHECK(t.defined(), "[nn.init.", name, "_] the tensor is undefined; create it before initializing it in place");
  if (t.device().type == DeviceType::Meta) return;
  DeviceScope scope(t.device());
  ops::copy_(t, make());
}
}  // namespace

void zeros_(Tensor& t) { refill(t, "zeros", [&] { return zeros(t.shape(), t.dtype()); }); }
void ones_(Tensor& t) { refill(t, "ones", [&] { return ones(t.shape(), t.dtype()); }); }
void constant_(Tensor& t, double value) { refill(t, "constant", [&] { return constant(t.shape(), value, t.dtype()); }); }
void uniform_(Tensor& t, double low, double high) {
  refill(t, "uniform", [&] { return uniform(t.shape(), low, high, t.dtype()); });
}
void normal_(Tensor& t, double mean, double std) {
  refill(t, "normal", [&] { return normal(t.shape(), mean, std, t.dtype()); });
}
void trunc_normal_(Tensor& t, double mean, double std, double a, double b) {
  refill(t, "trunc_normal", [&] { return trunc_normal(t.shape(), mean, std, a, b, t.dtype()); });
}
void xavier_uniform_(Tensor& t, double gain) {
  refill(t, "xavier_uniform", [&] { return xavier_uniform(t.shape(), gain, t.dtype()); });
}
void xavier_normal_(Tensor& t, double gain) {
  refill(t, "xavier_normal", [&] { return xavier_normal(t.shape(), gain, t.dtype()); });
}
void kaiming_uniform_(Tensor& t, double a, FanMode mode, Nonlinearity nl) {
  refill(t, "kaiming_uniform", [&] { return kaiming_uniform(t.shape(), a, mode, nl, t.dtype()); });
}
void kaiming_normal_(Tensor& t, double a, FanMode mode, Nonlinearity nl) {
  refill(t, "kaiming_normal", [&] { return kaiming_normal(t.shape(), a, mode, nl, t.dtype()); });
}

}  // namespace spore::nn::init
