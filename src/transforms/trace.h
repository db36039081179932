// SPDX-License-Identifier: Apache-2.0
#pragma once
// A symbolic trace (jit, vmap): every op is recorded as an IR node and nothing runs; factories
// and random ops included. A tensor created outside the trace enters it as a graph input bound
// by reference (role constant); only literals (weak 0-d tensors) become `constant` nodes.
// Traced tensors live on the meta device: they have types but no data, so reading one is an
// error that points to cond/while_loop.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "autodiff/frames.h"
#include "ir/builder.h"
#include "prims/random_key.h"

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
  /// literal), then one output per graph input the function wrote in place, marked "updates
  /// input j" (in input order). The trace must be closed (its frame popped) before.
  ir::GraphPtr finish(std::span<const Tensor> outputs);
  /// Lets the traced function write its inputs and captured tensors in place (jit, vmap);
  /// otherwise (control-flow bodies) an in-place write is an error that says to carry the value.
  void allow_state() { allow_state_ = true; }
  /// Tensors captured from outside, in the order of their graph inputs (after the data inputs).
  const std::vector<Tensor>& captured() const { return captured_; }
  size_t num_data_inputs() const { return num_data_; }
  /// True when a random primitive was recorded.
  bool has_random() const { return has_random_; }
  /// Makes the generator state a graph input (jit): a random op whose key the traced function
  /// drew from the CPU generator (per `log`, open while the function runs) takes its key from
  /// an int64 input [seed, base offset] and keeps only its fixed delta from the base in its
  /// attributes, so the graph draws on every call what PyNative would. Keys given explicitly or
  /// drawn after a reseed inside the function stay constants in the attributes.
  /// Call before the traced function runs.
  void functionalize_random(const prims::DrawLog* log);
  /// The position in captured() of the generator-state input, or -1 when no op took its key
  /// from it. Its value in captured() is a placeholder: the caller passes the current state.
  int random_key_capture() const { return key_capture_; }

  void record(int, const Primitive&, const void*, std::span<const Tensor>, std::span<const Tensor>) override {}
  void build(const Primitive& p, const void* attrs, std::span<const Tensor> in,
             std::span<const TensorType> types, std::span<Tensor> out) override;
  /// Functionalizes an in-place write: later reads of dst see `value`; a graph input written
  /// becomes state (role buffer unless it is a parameter) updated by an extra output.
  void write(const Tensor& dst, const Tensor& value, const char* op) override;

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
  const prims::DrawLog* log_ = nullptr;
  Tensor key_placeholder_;
  int key_capture_ = -1;
  /// The generator-state input (created on first use).
  ir::ValueRef random_key_value();
  bool allow_state_ = false;
  std::map<int32_t, ir::ValueRef> writes_;           // graph input -> its latest value
  std::map<const void*, int32_t> written_inputs_;    // tensor written -> the graph input it was
  /// Errors when `v` is a view of a value written in place after the view was taken: the
  /// view holds the old value in the trace, while eagerly it would see the write.
  void check_not_stale(ir::ValueRef v, const std::string& user) const;
  std::map<std::pair<int32_t, int32_t>, std::pair<int32_t, int32_t>> view_root_;  // view value -> its base
  std::set<std::pair<int32_t, int32_t>> views_;      // values a view primitive made
  std::set<std::pair<int32_t, int32_t>> written_;    // values overwritten by an in-place write
  std::vector<const void*> written_storages_;       // storages of outside tensors written
};

}  // namespace spore::transforms
