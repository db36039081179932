// SPDX-License-Identifier: Apache-2.0
#pragma once
// Parameter initializers (PyTorch's torch.nn.init formulas), drawn from Spore's seeded default
// generator: manual_seed(s) before building a model makes its weights reproducible. Each comes as
// a factory (a new tensor) and as an in-place `name_` form that overwrites an existing tensor.
#include <cstdint>
#include <utility>

#include "spore/tensor.h"

namespace spore::nn::init {

/// While alive, the initializers on this thread (and so every layer's parameters and buffers)
/// create their tensors on `device` instead of the CPU. On kMeta they only record shapes and
/// dtypes: no memory and no random draws, so a large model is built at once; then
/// load_state_dict (or Cell::to_empty) gives it real tensors. Forward calls on meta tensors
/// infer shapes without computing.
class DeviceScope {
 public:
  explicit DeviceScope(Device device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  Device previous_;
};
/// The device initializers create tensors on (kCPU unless a DeviceScope says otherwise).
Device current_device();

enum class FanMode { FanIn, FanOut };
enum class Nonlinearity { Linear, Conv, Sigmoid, Tanh, ReLU, LeakyReLU, SELU };

/// PyTorch's recommended gain: 1 (linear, conv, sigmoid), 5/3 (tanh), sqrt(2) (relu),
/// sqrt(2 / (1 + slope^2)) (leaky relu, `param` = slope), 3/4 (selu).
double calculate_gain(Nonlinearity nl, double param = 0.01);
/// (fan_in, fan_out) of a weight: dims 1 and 0 times the receptive field (dims 2...).
std::pair<int64_t, int64_t> fan_in_and_fan_out(const Shape& shape);

/// Uninitialized memory on the scope's device, for a layer that fills it next with the in-place
/// forms (its constructor and its reset_parameters() then share one piece of code).
Tensor empty(const Shape& shape, DType dtype = DType::Float32);
Tensor zeros(const Shape& shape, DType dtype = DType::Float32);
Tensor ones(const Shape& shape, DType dtype = DType::Float32);
Tensor constant(const Shape& shape, double value, DType dtype = DType::Float32);
Tensor uniform(const Shape& shape, double low = 0.0, double high = 1.0, DType dtype = DType::Float32);
Tensor normal(const Shape& shape, double mean = 0.0, double std = 1.0, DType dtype = DType::Float32);
/// N(mean, std) truncated to [a, b] (absolute bounds, as PyTorch's trunc_normal_).
Tensor trunc_normal(const Shape& shape, double mean = 0.0, double std = 1.0, double a = -2.0, double b = 2.0,
                    DType dtype = DType::Float32);
/// U(-g * sqrt(6 / (fan_in + fan_out)), +...).
Tensor xavier_uniform(const Shape& shape, double gain = 1.0, DType dtype = DType::Float32);
/// N(0, g * sqrt(2 / (fan_in + fan_out))).
Tensor xavier_normal(const Shape& shape, double gain = 1.0, DType dtype = DType::Float32);
/// U(-b, b) with b = gain(nl, a) * sqrt(3 / fan). PyTorch's Dense/Conv default is a = sqrt(5).
Tensor kaiming_uniform(const Shape& shape, double a = 0.0, FanMode mode = FanMode::FanIn,
                       Nonlinearity nl = Nonlinearity::LeakyReLU, DType dtype = DType::Float32);
/// N(0, gain(nl, a) / sqrt(fan)).
Tensor kaiming_normal(const Shape& shape, double a = 0.0, FanMode mode = FanMode::FanIn,
                      Nonlinearity nl = Nonlinearity::LeakyReLU, DType dtype = DType::Float32);

// In place: overwrite `t` (keeping its shape and dtype) with a fresh draw on t's own device; a
// meta tensor is left alone and nothing is drawn.
void zeros_(Tensor& t);
void ones_(Tensor& t);
void constant_(Tensor& t, double value);
void uniform_(Tensor& t, double low = 0.0, double high = 1.0);
void normal_(Tensor& t, double mean = 0.0, double std = 1.0);
void trunc_normal_(Tensor& t, double mean = 0.0, double std = 1.0, double a = -2.0, double b = 2.0);
void xavier_uniform_(Tensor& t, double gain = 1.0);
void xavier_normal_(Tensor& t, double gain = 1.0);
void kaiming_uniform_(Tensor& t, double a = 0.0, FanMode mode = FanMode::FanIn,
                      Nonlinearity nl = Nonlinearity::LeakyReLU);
void kaiming_normal_(Tensor& t, double a = 0.0, FanMode mode = FanMode::FanIn,
                     Nonlinearity nl = Nonlinearity::LeakyReLU);

}  // namespace spore::nn::init
