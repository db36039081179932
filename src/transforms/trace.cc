// SPDX-License-Identifier: Apache-2.0
#include "transforms/trace.h"

#include "runtime/dispatch.h"
#include "spore/error.h"
#include "spore/ops/creation.h"
#include "spore/scope.h"
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

namespace {
// Two handles of one value: the same tensor, or another handle with the same storage and geometry.
bool same_value(const Tensor& a, const Tensor& b) {
  if (a.is_same(b)) return true;
  if (a.device().type == DeviceType::Meta || a.storage() != b.storage()) return false;
  const TensorImpl &x = *a.impl(), &y = *b.impl();
  return x.offset == y.offset && x.dtype == y.dtype && x.weak == y.weak && x.shape == y.shape && x.strides == y.strides;
}
}  // namespace

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
  // A tape inside the trace (grad of a function that reads a captured tensor, e.g. a Cell's
  // weights) tracks a fresh alias of the tensor: another handle with the same storage and the
  // same geometry. It is the same value, so it binds to the same graph input; binding it twice
  // would make a later in-place write (the optimizer's) look like a write through a view.
  for (size_t i = 0; i < captured_.size(); ++i)
    if (same_value(captured_[i], t)) return captured_values_[i];
  for (const void* st : written_storages_)
    SPORE_CHECK(t.device().type == DeviceType::Meta || t.storage().get() != st,
                "[jit] this tensor shares memory with a tensor the function wrote in place (a view of it, or its base); "
                "a trace cannot follow writes through views: write the whole tensor and read it after the write");
  // Bound by reference: the caller's tensor is read when the graph runs, never copied into it.
  data_done_ = true;
  captured_.push_back(t);
  captured_values_.push_back(b_.param(to_ir(runtime::type_of(t)), closed_ ? ir::Role::Data : ir::Role::Constant));
  return captured_values_.back();
}

void SymbolicTrace::functionalize_random(const prims::DrawLog* log) {
  log_ = log;
  key_placeholder_ = ops::zeros({2}, {DType::Int64});  // made here: inside the trace it would be traced
}

ir::ValueRef SymbolicTrace::random_key_value() {
  if (key_capture_ < 0) {
    // The placeholder is bound like a captured tensor; the role says it is state (the generator's).
    const ir::ValueRef v = value_of(key_placeholder_);
    b_.set_role(v.index, ir::Role::Buffer);
    key_capture_ = static_cast<int>(captured_.size()) - 1;
  }
  return captured_values_[static_cast<size_t>(key_capture_)];
}

void SymbolicTrace::build(const Primitive& p, const void* attrs, std::span<const Tensor> in,
                          std::span<const TensorType> types, std::span<Tensor> out) {
  has_random_ |= p.effect == Effect::Random;
  std::vector<ir::ValueRef> ins;
  ins.reserve(in.size() + 1);
  for (const Tensor& t : in) {
    ins.push_back(value_of(t));
    check_not_stale(ins.back(), p.name);
  }
  std::shared_ptr<const void> node_attrs;
  // A key drawn from the generator while tracing: base (a graph input) + this op's delta. The
  // vjp of dropout calls the primitive again with the forward's key, so it gets the same delta.
  if (log_ != nullptr && p.effect == Effect::Random && prims::random_data_inputs(p) == static_cast<int>(in.size())) {
    if (auto delta = log_->delta_of(prims::key_in_attrs(p, attrs))) {
      node_attrs = prims::with_key_in_attrs(p, attrs, RandomKey{0, *delta});
      ins.push_back(random_key_value());
    }
  }
  if (node_attrs == nullptr) node_attrs = p.attrs.clone(attrs);
  std::vector<ir::Type> outs;
  for (const TensorType& t : types) outs.push_back(to_ir(t));
  std::pair<int32_t, int32_t> root{};
  if (p.view != nullptr && !ins.empty()) {
    root = {ins[0].node, ins[0].index};
    if (auto it = view_root_.find(root); it != view_root_.end()) root = it->second;
  }
  auto vals = b_.add(p.name, std::move(node_attrs), std::move(ins), std::move(outs), current_scope(),
                     subgraphs_of(p, attrs));
  for (size_t i = 0; i < types.size(); ++i) {
    out[i] = symbolic_tensor(types[i], vals[i]);
    if (p.view != nullptr) {
      views_.insert({vals[i].node, vals[i].index});
      view_root_[{vals[i].node, vals[i].index}] = root;
    }
  }
}

void SymbolicTrace::check_not_stale(ir::ValueRef v, const std::string& user) const {
  auto it = view_root_.find({v.node, v.index});
  SPORE_CHECK(it == view_root_.end() || !written_.count(it->second), "[", user,
              "] under jit or vmap this reads a view (reshape, slice, transpose ...) of a tensor that has views taken of "
              "it earlier in the function and was then written in place; the write would not reach the view in a "
              "trace: take the view after the write, or use the out-of-place op");
}

void SymbolicTrace::write(const Tensor& dst, const Tensor& value, const char* op) {
  SPORE_CHECK(allow_state_, "[", op,
              "] an in-place update inside a control-flow body (cond, switch_case, while_loop, scan) is not supported: "
              "return the new value from the branch, or carry it through the loop, instead");
  SPORE_CHECK(!(dst.weak() && dst.dim() == 0 && dst.device().type != DeviceType::Meta), "[", op,
              "] under jit or vmap the destination is a 0-d weak (literal) tensor, which a trace folds into a constant; "
              "create it with a dtype (e.g. scalar_tensor(0.0, DType::Float32)) to make it state");
  const ir::ValueRef old = value_of(dst);
  SPORE_CHECK(!views_.count({old.node, old.index}), "[", op,
              "] under jit or vmap the destination is a view (reshape, slice, transpose ...) made inside the function; a "
              "trace cannot write through views: write the whole tensor, or use the out-of-place op");
  // Views taken of the old value stay valid for reads made before this write; a read after it
  // is refused (check_not_stale), since in a trace the view would still hold the old value.
  written_.insert({old.node, old.index});
  const ir::ValueRef nv = value_of(value);
  const void* key = dst.impl();  // the handle the graph input was bound to
  if (const auto* e = autodiff::find_entry(dst, uid())) {
    values_[static_cast<size_t>(e->id)] = nv;
  } else {
    for (size_t i = 0; i < captured_.size(); ++i) {
      if (!same_value(captured_[i], dst)) continue;
      for (size_t k = 0; k < captured_.size(); ++k)
        SPORE_CHECK(k == i || dst.device().type == DeviceType::Meta || captured_[k].storage() != dst.storage(), "[", op,
                    "] under jit or vmap the destination shares memory with another tensor the function reads (a view "
                    "of it, or its base); a trace cannot follow writes through views: write the whole tensor");
      captured_values_[i] = nv;
      key = captured_[i].impl();
      if (dst.device().type != DeviceType::Meta) written_storages_.push_back(dst.storage().get());
    }
  }
  // A graph input written (an argument or a captured tensor) is state: its final value leaves
  // the graph as an output that updates it.
  auto it = written_inputs_.find(key);
  if (it == written_inputs_.end() && old.node == ir::ValueRef::kParam) it = written_inputs_.emplace(key, old.index).first;
  if (it != written_inputs_.end()) writes_[it->second] = nv;
}

ir::GraphPtr SymbolicTrace::finish(std::span<const Tensor> outputs) {
  for (const Tensor& t : outputs) {
    const ir::ValueRef v = value_of(t);
    check_not_stale(v, "jit");
    b_.output(v);
  }
  for (const auto& [input, v] : writes_) {
    b_.set_role(input, ir::Role::Buffer);
    b_.output(v, input);
  }
  return b_.build();
}

}  // namespace spore::transforms
