// SPDX-License-Identifier: Apache-2.0
#include "io/onnx/op_context.h"

#include <algorithm>
#include <set>

#include "autodiff/frames.h"
#include "io/onnx/proto_tensor.h"

namespace spore::io::onnx_detail {

namespace {
// Reading a constant's values while the import trace is open must not record the conversion.
template <class T>
std::vector<T> eager_values(const Tensor& t, DType dt) {
  auto frames = autodiff::active_frames();
  for (size_t i = 0; i < frames.size(); ++i)
    if (frames[i]->kind() == autodiff::Frame::Kind::Symbolic) {
      autodiff::SuspendAbove eager(static_cast<int>(i));
      return t.to(dt).template to_vector<T>();
    }
  return t.to(dt).template to_vector<T>();
}
}  // namespace

namespace {
thread_local ImportConstants* t_constants = nullptr;

// Constants up to this size are shared (hashing them is cheap next to tracing); larger ones (a
// counted loop's iteration numbers) are made once per trace.
constexpr int64_t kMaxInternedBytes = int64_t{1} << 20;
}  // namespace

ImportConstants::ImportConstants() : prev_(t_constants) { t_constants = this; }
ImportConstants::~ImportConstants() { t_constants = prev_; }

Tensor ImportConstants::intern(const Tensor& t) {
  if (!t.defined() || t.device().type != DeviceType::CPU) return t;  // (a meta tensor has no values)
  const Tensor c = t.contiguous();
  const auto bytes = static_cast<size_t>(c.numel()) * c.itemsize();
  if (static_cast<int64_t>(bytes) > kMaxInternedBytes) return t;
  const std::string_view data(static_cast<const char*>(c.data_ptr()), bytes);
  size_t h = std::hash<std::string_view>{}(data) ^ (static_cast<size_t>(c.dtype()) * 0x9e3779b97f4a7c15ULL) ^
             (c.weak() ? 0x51ed27 : 0);
  for (Dim d : c.shape()) h = h * 31 + static_cast<size_t>(d);
  auto [lo, hi] = by_hash_.equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    const Tensor& u = it->second;
    if (u.dtype() == c.dtype() && u.weak() == c.weak() && u.shape() == c.shape() &&
        std::string_view(static_cast<const char*>(u.data_ptr()), bytes) == data)
      return u;
  }
  by_hash_.emplace(h, c);
  return c;
}

Tensor at_import(const std::function<Tensor()>& f) {
  // Interned with the traces still set aside: comparing reads the values (contiguous() inside a
  // trace would be traced).
  auto made = [&] { return t_constants ? t_constants->intern(f()) : f(); };
  auto frames = autodiff::active_frames();
  for (size_t i = 0; i < frames.size(); ++i)
    if (frames[i]->kind() == autodiff::Frame::Kind::Symbolic) {
      autodiff::SuspendAbove suspend(static_cast<int>(i));
      return made();
    }
  return made();
}

void OpContext::fail(const std::string& msg) const {
  throw Error("[onnx] node '" + node_.name() + "' (" + node_.op_type() + "): " + msg);
}

const Tensor& OpContext::in(size_t i) const {
  if (!has(i))
    fail("needs input " + std::to_string(i) + " but the node gives " + std::to_string(inputs_.size()) +
         " (or it is empty)");
  return inputs_[i];
}

bool OpContext::is_constant(size_t i) const { return has(i) && inputs_[i].device().type != DeviceType::Meta; }

std::vector<int64_t> OpContext::ints_of(size_t i) const {
  const Tensor& t = in(i);
  if (!is_constant(i))
    fail("input " + std::to_string(i) + " ('" + node_.input(static_cast<int>(i)) +
         "') must be known at import time (an initializer, a Constant, or computed from them and static shapes): "
         "this operator reads it where a run-time value cannot go (an axis, a rank, a mode)");
  SPORE_CHECK(t.dtype() != DType::Float32 && t.dtype() != DType::Float64, "[onnx] node '", node_.name(), "' (",
              node_.op_type(), "): input ", i, " must be integer, got ", dtype_name(t.dtype()));
  read_.resize(std::max(read_.size(), i + 1));
  read_[i] = true;
  return eager_values<int64_t>(t, DType::Int64);
}

std::vector<double> OpContext::doubles_of(size_t i) const {
  const Tensor& t = in(i);
  if (!is_constant(i)) fail("input " + std::to_string(i) + " must be known at import time");
  read_.resize(std::max(read_.size(), i + 1));
  read_[i] = true;
  return eager_values<double>(t, DType::Float64);
}

void OpContext::check_static(const Tensor& x) const {
  for (Dim d : x.shape())
    if (is_symbolic(d)) fail("needs a static input shape, got " + shape_str(x.shape()));
}

int64_t OpContext::int_scalar(size_t i) const {
  const auto v = ints_of(i);
  if (v.size() != 1) fail("input " + std::to_string(i) + " must hold one value, got " + std::to_string(v.size()));
  return v[0];
}

double OpContext::double_scalar(size_t i) const {
  const auto v = doubles_of(i);
  if (v.size() != 1) fail("input " + std::to_string(i) + " must hold one value, got " + std::to_string(v.size()));
  return v[0];
}

const onnx::AttributeProto* OpContext::attr(const std::string& name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t OpContext::i(const std::string& name, int64_t def) const {
  const auto* a = attr(name);
  return a ? a->i() : def;
}
double OpContext::f(const std::string& name, double def) const {
  const auto* a = attr(name);
  return a ? static_cast<double>(a->f()) : def;
}
std::string OpContext::s(const std::string& name, const std::string& def) const {
  const auto* a = attr(name);
  return a ? a->s() : def;
}
std::optional<std::vector<int64_t>> OpContext::ints(const std::string& name) const {
  const auto* a = attr(name);
  if (!a) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}
std::optional<std::vector<double>> OpContext::floats(const std::string& name) const {
  const auto* a = attr(name);
  if (!a) return std::nullopt;
  return std::vector<double>(a->floats().begin(), a->floats().end());
}
std::optional<Tensor> OpContext::tensor(const std::string& name) const {
  const auto* a = attr(name);
  if (!a || !a->has_t()) return std::nullopt;
  return tensor_from_proto(a->t(), "attribute '" + name + "' of node '" + node_.name() + "'");
}

const onnx::GraphProto& OpContext::graph(const std::string& name) const {
  const auto* a = attr(name);
  if (!a || !a->has_g()) fail("needs the graph attribute '" + name + "'");
  return a->g();
}

std::vector<Tensor> OpContext::run_subgraph(const onnx::GraphProto& g, const std::vector<Tensor>& inputs) const {
  if (!subgraph_) fail("sub-graphs cannot be imported here (internal: no sub-graph runner)");
  if (static_cast<size_t>(g.input_size()) != inputs.size())
    fail("sub-graph '" + g.name() + "' declares " + std::to_string(g.input_size()) + " inputs but is given " +
         std::to_string(inputs.size()));
  return subgraph_(g, inputs);
}

int64_t axis_of(const OpContext& c, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1) + (rank == 0 ? 0 : 0))
    c.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

namespace {
const OpTable& table() {
  static const OpTable t = [] {
    OpTable x;
    add_elementwise_ops(x);
    add_reduce_ops(x);
    add_shape_ops(x);
    add_nn_ops(x);
    add_loss_ops(x);
    add_control_flow_ops(x);
    add_resize_ops(x);
    add_index_ops(x);
    add_quantize_ops(x);
    add_rnn_ops(x);
    add_training_ops(x);
    return x;
  }();
  return t;
}
}  // namespace

const OpEntry* find_op(const std::string& op_type, int opset) {
  for (const auto& e : table())
    if (op_type == e.op_type && opset >= e.min_opset && opset <= e.max_opset) return &e;
  return nullptr;
}

std::vector<std::string> supported_op_types() {
  std::set<std::string> s;
  for (const auto& e : table()) s.insert(e.op_type);
  return {s.begin(), s.end()};
}

}  // namespace spore::io::onnx_detail
