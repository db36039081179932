// SPDX-License-Identifier: Apache-2.0
#pragma once
// Activation cells: thin wrappers of the elementwise ops, for SequentialCell.
#include "spore/nn/cell.h"

namespace spore::nn {

#define SPORE_NN_ACTIVATION(Name)                     \
  class Name : public UnaryCell {                     \
   public:                                            \
    Name() : UnaryCell(#Name) {}                      \
    Tensor construct(const Tensor& x) override;       \
  };
SPORE_NN_ACTIVATION(ReLU)
SPORE_NN_ACTIVATION(ReLU6)
SPORE_NN_ACTIVATION(Sigmoid)
SPORE_NN_ACTIVATION(Tanh)
SPORE_NN_ACTIVATION(SiLU)
SPORE_NN_ACTIVATION(Mish)
SPORE_NN_ACTIVATION(SELU)
SPORE_NN_ACTIVATION(Hardswish)
SPORE_NN_ACTIVATION(Hardsigmoid)
#undef SPORE_NN_ACTIVATION

/// approximate = true uses the tanh form (PyTorch's approximate='tanh').
class GELU : public UnaryCell {
 public:
  explicit GELU(bool approximate = false) : UnaryCell("GELU"), approximate_(approximate) {}
  Tensor construct(const Tensor& x) override;

 private:
  bool approximate_;
};

class LeakyReLU : public UnaryCell {
 public:
  explicit LeakyReLU(double negative_slope = 0.01) : UnaryCell("LeakyReLU"), slope_(negative_slope) {}
  Tensor construct(const Tensor& x) override;

 private:
  double slope_;
};

class ELU : public UnaryCell {
 public:
  explicit ELU(double alpha = 1.0) : UnaryCell("ELU"), alpha_(alpha) {}
  Tensor construct(const Tensor& x) override;

 private:
  double alpha_;
};

class Softplus : public UnaryCell {
 public:
  explicit Softplus(double beta = 1.0, double threshold = 20.0) : UnaryCell("Softplus"), beta_(beta), threshold_(threshold) {}
  Tensor construct(const Tensor& x) override;

 private:
  double beta_, threshold_;
};

class Softmax : public UnaryCell {
 public:
  explicit Softmax(int64_t axis = -1) : UnaryCell("Softmax"), axis_(axis) {}
  Tensor construct(const Tensor& x) override;

 private:
  int64_t axis_;
};

class LogSoftmax : public UnaryCell {
 public:
  explicit LogSoftmax(int64_t axis = -1) : UnaryCell("LogSoftmax"), axis_(axis) {}
  Tensor construct(const Tensor& x) override;

 private:
  int64_t axis_;
};

}  // namespace spore::nn
