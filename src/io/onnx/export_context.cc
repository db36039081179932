// SPDX-License-Identifier: Apache-2.0
#include "io/onnx/export_context.h"

#include <cstring>

#include "spore/error.h"

namespace spore::io::onnx_detail {

using onnx::TensorProto;

int32_t onnx_dtype(ir::DType t) {
  switch (t) {
    case ir::DType::Bool: return TensorProto::BOOL;
    case ir::DType::UInt8: return TensorProto::UINT8;
    case ir::DType::Int8: return TensorProto::INT8;
    case ir::DType::Int16: return TensorProto::INT16;
    case ir::DType::Int32: return TensorProto::INT32;
    case ir::DType::Int64: return TensorProto::INT64;
    case ir::DType::Float16: return TensorProto::FLOAT16;
    case ir::DType::BFloat16: return TensorProto::BFLOAT16;
    case ir::DType::Float32: return TensorProto::FLOAT;
    case ir::DType::Float64: return TensorProto::DOUBLE;
  }
  return TensorProto::UNDEFINED;
}

namespace {
int32_t onnx_dtype_of(DType t) { return onnx_dtype(static_cast<ir::DType>(static_cast<uint8_t>(t))); }
}  // namespace

void tensor_to_proto(const Tensor& t, TensorProto& p) {
  SPORE_CHECK(t.device().type == DeviceType::CPU, "[export_onnx] state tensors must be on the CPU to be written");
  for (int64_t k = 0; k < t.dim(); ++k) p.add_dims(t.size(k));
  p.set_data_type(onnx_dtype_of(t.dtype()));
  const Tensor c = t.contiguous();
  const size_t n = static_cast<size_t>(c.numel()) * c.itemsize();
  p.mutable_raw_data()->assign(n ? static_cast<const char*>(c.data_ptr()) : "", n);
}

ExportContext::ExportContext(onnx::GraphProto& g, const ir::Graph& ir)
    : g_(g),
      ir_(ir),
      used_(std::make_shared<std::set<std::string>>()),
      next_suffix_(std::make_shared<std::map<std::string, int>>()) {
  for (const auto& n : ir.nodes())
    for (const auto& v : n->inputs()) used_values_.insert(key(v));
  for (const auto& o : ir.outputs()) used_values_.insert(key(o.value));
}

ExportContext::ExportContext(onnx::GraphProto& g, const ir::Graph& ir, const ExportContext& parent)
    : ExportContext(g, ir) {
  used_ = parent.used_;
  next_suffix_ = parent.next_suffix_;
}

void ExportContext::reserve(const std::string& name) {
  SPORE_CHECK(!name.empty(), "[export_onnx] an input, initializer or output has an empty name");
  SPORE_CHECK(used_->insert(name).second, "[export_onnx] the name '", name,
              "' is used twice (inputs, state and outputs need distinct names)");
}

std::string ExportContext::unique(const std::string& base) {
  if (used_->insert(base).second) return base;
  for (int& k = (*next_suffix_)[base];;) {
    std::string s = base + "_" + std::to_string(++k);
    if (used_->insert(s).second) return s;
  }
}

const std::string* ExportContext::name_of(ir::ValueRef v) const {
  auto it = names_.find(key(v));
  return it == names_.end() ? nullptr : &it->second;
}

void ExportContext::begin(const ir::Node& n, int32_t index) {
  node_ = &n;
  index_ = index;
  part_ = 0;
  // The node's single output is named after the node; several outputs get ":k" suffixes.
  const std::string base = n.scope().empty() ? n.op() : n.scope() + "/" + n.op();
  bool preassigned_single = n.outputs().size() == 1 && preassigned_.count(key({index, 0}));
  base_ = preassigned_single ? preassigned_.at(key({index, 0})) : unique(base);
}

std::string ExportContext::in(size_t i) const {
  const ir::ValueRef v = node_->inputs().at(i);
  if (const std::string* s = name_of(v)) return *s;
  if (v.node == ir::ValueRef::kParam) fail("input " + std::to_string(i) + " is a graph input without a name");
  fail("input " + std::to_string(i) + " is output " + std::to_string(v.index) + " of node " + std::to_string(v.node) + " (" +
       ir_.nodes().at(static_cast<size_t>(v.node))->op() + "), which has no ONNX equivalent");
}

const ir::TensorType& ExportContext::in_type(size_t i) const {
  const ir::Type& t = ir_.type_of(node_->inputs().at(i));
  if (ir::is_token(t)) fail("takes an ordering token (I/O or collective effects), which ONNX cannot express");
  return std::get<ir::TensorType>(t);
}

const ir::TensorType& ExportContext::out_type(size_t i) const {
  const ir::Type& t = node_->outputs().at(i);
  if (ir::is_token(t)) fail("gives an ordering token (I/O or collective effects), which ONNX cannot express");
  return std::get<ir::TensorType>(t);
}

std::string ExportContext::out(size_t i) {
  const ir::ValueRef v{index_, static_cast<int32_t>(i)};
  std::string name;
  if (auto it = preassigned_.find(key(v)); it != preassigned_.end()) name = it->second;
  else if (node_->outputs().size() == 1) name = base_;
  else name = unique(base_ + ":" + std::to_string(i));
  bind(v, name);
  return name;
}

void ExportContext::alias(size_t i, const std::string& name) {
  const ir::ValueRef v{index_, static_cast<int32_t>(i)};
  if (preassigned_.count(key(v))) add("Identity", {name}, {out(i)});
  else bind(v, name);
}

std::string ExportContext::tmp(const std::string& what) { return unique(base_ + "/" + what); }

onnx::NodeProto& ExportContext::add(const std::string& op_type, const std::vector<std::string>& inputs,
                                    const std::vector<std::string>& outputs) {
  onnx::NodeProto* n = g_.add_node();
  n->set_name(part_ == 0 ? base_ : base_ + "/" + op_type + "_" + std::to_string(part_));
  ++part_;
  n->set_op_type(op_type);
  for (const auto& s : inputs) n->add_input(s);
  for (const auto& s : outputs) n->add_output(s);
  return *n;
}

std::string ExportContext::op(const std::string& op_type, const std::vector<std::string>& inputs, const std::string& what) {
  std::string y = tmp(what);
  add(op_type, inputs, {y});
  return y;
}

void ExportContext::initializer(const Tensor& t, const std::string& name) {
  TensorProto* p = g_.add_initializer();
  p->set_name(name);
  tensor_to_proto(t, *p);
}

std::string ExportContext::tensor(const Tensor& t, const std::string& what) {
  std::string name = tmp(what);
  initializer(t, name);
  return name;
}

std::string ExportContext::ints(const std::vector<int64_t>& v, const std::string& what) {
  std::string name = tmp(what);
  TensorProto* p = g_.add_initializer();
  p->set_name(name);
  p->set_data_type(TensorProto::INT64);
  p->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) p->add_int64_data(x);
  return name;
}

std::string ExportContext::scalar(double v, ir::DType dt, const std::string& what) {
  std::string name = tmp(what);
  TensorProto* p = g_.add_initializer();
  p->set_name(name);
  p->set_data_type(onnx_dtype(dt));
  std::string raw;
  auto put = [&](auto x) { raw.assign(reinterpret_cast<const char*>(&x), sizeof x); };
  switch (dt) {
    case ir::DType::Bool: put(static_cast<uint8_t>(v != 0)); break;
    case ir::DType::UInt8: put(static_cast<uint8_t>(v)); break;
    case ir::DType::Int8: put(static_cast<int8_t>(v)); break;
    case ir::DType::Int16: put(static_cast<int16_t>(v)); break;
    case ir::DType::Int32: put(static_cast<int32_t>(v)); break;
    case ir::DType::Int64: put(static_cast<int64_t>(v)); break;
    case ir::DType::Float32: put(static_cast<float>(v)); break;
    case ir::DType::Float64: put(v); break;
    case ir::DType::Float16:
    case ir::DType::BFloat16: {
      // Through a float32 tensor, so the rounding is our cast's.
      Tensor t = Tensor::empty({}, DType::Float32);
      *t.data<float>() = static_cast<float>(v);
      Tensor h = t.to(dt == ir::DType::Float16 ? DType::Float16 : DType::BFloat16);
      raw.assign(static_cast<const char*>(h.data_ptr()), 2);
      break;
    }
  }
  p->set_raw_data(raw);
  return name;
}

void ExportContext::fail(const std::string& msg) const { throw Error("[export_onnx] " + where() + ": " + msg); }

std::string ExportContext::where() const {
  return "op '" + node_->op() + "'" + (node_->scope().empty() ? std::string() : " at scope '" + node_->scope() + "'");
}

std::vector<int64_t> ExportContext::static_shape(const ir::TensorType& t, const char* what) const {
  std::vector<int64_t> s;
  for (const auto& d : t.shape) {
    if (!d.is_const())
      fail(std::string(what) + " has the symbolic dimension '" + d.str() +
           "' where ONNX needs a fixed size; export with a fixed example shape");
    s.push_back(d.value());
  }
  return s;
}

void set_value_type(onnx::ValueInfoProto& v, const ir::Type& type, const std::string& what) {
  SPORE_CHECK(!ir::is_token(type), "[export_onnx] ", what, " is an ordering token, which ONNX cannot express");
  const auto& t = std::get<ir::TensorType>(type);
  auto* tt = v.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx_dtype(t.dtype));
  auto* shape = tt->mutable_shape();
  for (const auto& d : t.shape) {
    auto* dim = shape->add_dim();
    if (d.is_const()) dim->set_dim_value(d.value());
    else dim->set_dim_param(d.str());
  }
}

void attr_i(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
void attr_f(onnx::NodeProto& n, const std::string& name, double v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(static_cast<float>(v));
}
void attr_s(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
void attr_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

const ExportTable& export_table() {
  static const ExportTable t = [] {
    ExportTable x;
    add_elementwise_exports(x);
    add_nn_exports(x);
    add_reduce_exports(x);
    add_shape_exports(x);
    add_control_flow_exports(x);
    return x;
  }();
  return t;
}

}  // namespace spore::io::onnx_detail
