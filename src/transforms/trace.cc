// SPDX-License-Identifier: Apache-2.0
#include "transforms/trace.h"

#include "runtime/dispatch.h"
#include "spore/error.h"
#include "transforms/control_flow.h"
#include "transforms/ir_bridge.h"

namespace spore::transforms {

SymbolicTrace::SymbolicTrace(std::string name, bool closed)
    : Frame(Kind::Symbolic), b_(std::move(name)), closed_(closed) {
  register_ir_ops();
}

void SymbolicTrace::bind(const Tensor& outer) { (void)value_of(outer); }

Tensor SymbolicTrace::symbolic_tensor(const TensorType& t, ir::ValueRef v) {
  Tensor s = Tensor::empty(t.shape, t.dtype, kMeta);
  s.impl()->weak = t.weak;
  autodiff::add_entry(s, {uid(), static_cast<int64_t>(values_.size()), Tensor()});
  values_.push_back(v);
  return s;
}

Tensor SymbolicTrace::input(const TensorType& t) {
  // A sub-graph may bind outside tensors between declared inputs (scan: carries, invariants,
  // slices); a top-level trace declares all inputs before the function runs.
  SPORE_ASSERT(closed_ || !data_done_, "trace inputs must come before captured tensors");
  ++num_data_;
  return symbolic_tensor(t, b_.param(to_ir(t), ir::Role::Data));
}

ir::ValueRef SymbolicTrace::value_of(const Tensor& t) {
  if (const auto* e = autodiff::find_entry(t, uid())) return values_[static_cast<size_t>(e->id)];
  if (t.weak() && t.dim() == 0 && t.device().type != DeviceType::Meta) {
    auto c = std::make_shared<ConstantAttrs>(constant_of(t));
    return b_.add1(kConstantOp, c, {}, to_ir(runtime::type_of(t)));
  }
  // In a closed trace (a sub-graph), tensors of the enclosing trace are operands like any
  // outside tensor; at top level a traced tensor from elsewhere has leaked out of its trace.
  SPORE_CHECK(closed_ || t.device().type != DeviceType::Meta || t.impl()->trace == nullptr,
              "[jit] a traced tensor from another trace was used here; tensors traced by an inner jit or vmap "
              "cannot leak out of it");
  for (size_t i = 0; i < captured_.size(); ++i)
    if (captured_[i].is_same(t)) return captured_values_[i];
  // Bound by reference: the caller's tensor is read when the graph runs, never copied into it.
  data_done_ = true;
  captured_.push_back(t);
  captured_values_.push_back(b_.param(to_ir(runtime::type_of(t)), closed_ ? ir::Role::Data : ir::Role::Constant));
  return captured_values_.back();
}

void SymbolicTrace::build(const Primitive& p, const void* attrs, std::span<const Tensor> in,
                          std::span<const TensorType> types, std::span<Tensor> out) {
  has_random_ |= p.effect == Effect::Random;
  std::vector<ir::ValueRef> ins;
  ins.reserve(in.size());
  for (const Tensor& t : in) ins.push_back(value_of(t));
  std::vector<ir::Type> outs;
  for (const TensorType& t : types) outs.push_back(to_ir(t));
  auto vals = b_.add(p.name, p.attrs.clone(attrs), std::move(ins), std::move(outs), {}, subgraphs_of(p, attrs));
  for (size_t i = 0; i < types.size(); ++i) out[i] = symbolic_tensor(types[i], vals[i]);
}

ir::GraphPtr SymbolicTrace::finish(std::span<const Tensor> outputs) {
  for (const Tensor& t : outputs) b_.output(value_of(t));
  return b_.build();
}

}  // namespace spore::transforms
