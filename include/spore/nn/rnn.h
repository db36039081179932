// SPDX-License-Identifier: Apache-2.0
#pragma once
// LSTM and GRU with PyTorch's parameters (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0,
// "_reverse" for the backward direction; gate order i, f, g, o and r, z, n) and its default
// init U(-1/sqrt(hidden), 1/sqrt(hidden)). Each layer and direction is one `scan` over time, so
// under jit a one-layer network compiles to a single loop; the input projection for all steps
// is one matmul outside the loop.
//
// Padded batches: `seq_length` (N,) integer lengths (MindSpore's argument; PyTorch packs the
// sequence instead) gives each sequence its own length. Steps at t >= length keep the state
// unchanged and output zeros, so h_n and c_n are each sequence's state after its last step and the
// reverse direction starts at that step: what PyTorch computes from a packed sequence, without
// the packing; a length of 0 (which torch refuses) outputs zeros and h_n = h0. The steps past
// a length are never read, so padding of any value (even inf) reaches no gradient. Lengths are
// checked to lie in [0, T] when they have values (PyNative); under a trace they cannot be read,
// and a longer one counts as T, a negative one as 0.
#include <string>
#include <vector>

#include "spore/nn/cell.h"

namespace spore::nn {

struct RNNOptions {
  int64_t num_layers = 1;
  bool bias = true;
  /// Inputs and outputs (N, T, F) instead of (T, N, F).
  bool batch_first = false;
  /// Dropout on the outputs of every layer but the last, while training.
  double dropout = 0.0;
  bool bidirectional = false;
};

/// Shared by LSTM and GRU: parameters and the per-layer, per-direction loop.
class RNNBase : public Cell {
 public:
  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  const RNNOptions& options() const { return o_; }

 protected:
  RNNBase(const char* name, int64_t input_size, int64_t hidden_size, int64_t gates, RNNOptions o);
  /// Runs every layer; `lstm` picks the cell. x is time-major (T, N, F); h0/c0 (layers*dirs, N, H);
  /// seq_length (N,) or undefined. Returns output (T, N, dirs*H), h_n and (LSTM) c_n.
  std::vector<Tensor> run(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& seq_length, bool lstm);
  /// Every weight and bias from U(-1/sqrt(hidden), 1/sqrt(hidden)), layer by layer, direction by
  /// direction, as PyTorch does.
  void reset_own() override;

  int64_t input_size_, hidden_size_, gates_;
  RNNOptions o_;
  // One entry per (layer, direction): w_ih, w_hh, b_ih, b_hh (biases undefined without bias).
  // Sized once in the constructor, so registered addresses stay valid.
  std::vector<Tensor> params_;
};

/// Long short-term memory over (T, N, input_size) (or batch_first, or unbatched (T, input_size)).
class LSTM : public RNNBase {
 public:
  LSTM(int64_t input_size, int64_t hidden_size, RNNOptions o = {});
  struct Output {
    Tensor output;  // (T, N, dirs * hidden)
    Tensor h_n;     // (layers * dirs, N, hidden)
    Tensor c_n;
  };
  /// h0 and c0 default to zeros; seq_length (N,) (0-d when unbatched) to T for every sequence.
  Output operator()(const Tensor& x, const Tensor& h0 = {}, const Tensor& c0 = {}, const Tensor& seq_length = {});
};

/// Gated recurrent unit.
class GRU : public RNNBase {
 public:
  GRU(int64_t input_size, int64_t hidden_size, RNNOptions o = {});
  struct Output {
    Tensor output;
    Tensor h_n;
  };
  Output operator()(const Tensor& x, const Tensor& h0 = {}, const Tensor& seq_length = {});
};

}  // namespace spore::nn
