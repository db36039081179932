// SPDX-License-Identifier: Apache-2.0
#pragma once
// A symbolic trace (jit, vmap): every op is recorded as an IR node and nothing runs; factories
// and random ops included. A tensor created outside the trace enters it as a graph input bound
// by reference (role constant); only literals (weak 0-d tensors) become `constant` nodes.
// Traced tensors live on the meta device: they have types but no data, so reading one is an
// error that points to cond/while_loop.
#include <string>
#include <vector>

#include "autodiff/frames.h"
#include "ir/builder.h"

namespace spore::transforms {

class SymbolicTrace final : public autodiff::Frame {
 public:
  /// A `closed` trace builds a sub-graph: tensors from outside become data inputs (after the
  /// declared ones) that the caller passes as explicit operands of the control-flow node.
  explicit SymbolicTrace(std::string name = "main", bool closed = false);

  /// A new graph input of `t`'s type (role data): the symbolic tensor the traced function sees.
  Tensor input(const TensorType& t);
  /// Pre-binds an outside tensor as the next input (closed traces), so a second trace of the
  /// same function gets the same input list.
  void bind(const Tensor& outer);
  /// Finishes the graph with `outputs` (each a tensor of this trace, a captured tensor, or a
  /// literal). The trace must be closed (its frame popped) before.
  ir::GraphPtr finish(std::span<const Tensor> outputs);
  /// Tensors captured from outside, in the order of their graph inputs (after the data inputs).
  const std::vector<Tensor>& captured() const { return captured_; }
  size_t num_data_inputs() const { return num_data_; }
  /// True when a random primitive was recorded (its key was drawn from the generator at trace
  /// time and sits in its attributes).
  bool has_random() const { return has_random_; }

  void record(int, const Primitive&, const void*, std::span<const Tensor>, std::span<const Tensor>) override {}
  void build(const Primitive& p, const void* attrs, std::span<const Tensor> in,
             std::span<const TensorType> types, std::span<Tensor> out) override;

 private:
  /// The value a tensor has in this trace: its own, a literal constant, or a captured input.
  ir::ValueRef value_of(const Tensor& t);
  Tensor symbolic_tensor(const TensorType& t, ir::ValueRef v);

  ir::GraphBuilder b_;
  std::vector<ir::ValueRef> values_;  // by entry id
  std::vector<Tensor> captured_;
  std::vector<ir::ValueRef> captured_values_;
  size_t num_data_ = 0;
  bool data_done_ = false;
  bool closed_ = false;
  bool has_random_ = false;
};

}  // namespace spore::transforms
