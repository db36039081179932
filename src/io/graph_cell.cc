// SPDX-License-Identifier: Apache-2.0
#include "spore/io/graph_cell.h"

#include <cstring>

#include "io/loaded_model.h"
#include "ir/printer.h"
#include "runtime/dispatch.h"
#include "runtime/trace_hooks.h"
#include "spore/mode.h"
#include "transforms/interpreter.h"
#include "transforms/ir_bridge.h"

namespace spore::io {
namespace {

// The levels of a dotted state name ("features.0.weight"): children of the GraphCell, so
// parameter_tree() keys are the names the model was saved with.
class StateScope final : public nn::Cell {
 public:
  StateScope() : Cell("GraphCell") {}
};

bool fits(const ir::TensorType& want, const Tensor& t) {
  if (transforms::to_ir(t.dtype()) != want.dtype || want.shape.size() != t.shape().size()) return false;
  for (size_t d = 0; d < want.shape.size(); ++d)
    if (want.shape[d].is_const() && want.shape[d].value() != t.shape()[d]) return false;
  return true;
}

// A state update (`updates` output): functionalized under a trace (jit writes it back after the
// call), else written in place, untracked by tapes like BatchNorm's running statistics.
void write_state(const Tensor& dst, const Tensor& value) {
  if (runtime::tls_open_traces != 0 && runtime::trace_hooks().write != nullptr &&
      runtime::trace_hooks().write(dst, value, "GraphCell", true))
    return;
  const Tensor v = value.contiguous();
  SPORE_CHECK(dst.is_contiguous() && dst.dtype() == v.dtype() && dst.shape() == v.shape(),
              "[GraphCell] a state update of ", dtype_name(v.dtype()), shape_str(v.shape()), " does not fit its tensor ",
              dtype_name(dst.dtype()), shape_str(dst.shape()));
  std::memcpy(dst.data_ptr(), v.data_ptr(), static_cast<size_t>(v.numel()) * v.itemsize());
  dst.storage()->bump_version();
}

}  // namespace

struct GraphCell::Impl {
  LoadedModel model;          // graph, names, metadata; its state lives in `slots`
  std::vector<Tensor> slots;  // registered by pointer: reserved once, never reallocated
  std::vector<std::unique_ptr<StateScope>> scopes;
  std::map<std::string, nn::Cell*> scope_of;
  std::vector<size_t> results;                          // graph outputs that are results
  std::vector<std::pair<size_t, size_t>> updates;       // (graph output, state index)
  std::shared_ptr<transforms::JitCore> jit = std::make_shared<transforms::JitCore>("GraphCell");
};

GraphCell::GraphCell(const LoadedModel& model) : Cell("GraphCell"), impl_(std::make_unique<Impl>()) {
  SPORE_CHECK(model.graph != nullptr, "[GraphCell] the model has no graph");
  const ir::Graph& g = *model.graph;
  SPORE_CHECK(model.num_data <= g.params().size() && model.state.size() == g.params().size() - model.num_data &&
                  model.state_names.size() == model.state.size(),
              "[GraphCell] the graph has ", g.params().size(), " inputs, but the model gives ", model.num_data,
              " data inputs, ", model.state.size(), " state tensors and ", model.state_names.size(), " state names");
  impl_->model = model;
  impl_->model.state.clear();
  auto& names = impl_->model;
  for (size_t i = names.input_names.size(); i < model.num_data; ++i) names.input_names.push_back(detail::cat("input_", i));
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const auto& o = g.outputs()[k];
    if (!o.updates) {
      impl_->results.push_back(k);
      continue;
    }
    SPORE_CHECK(static_cast<size_t>(*o.updates) >= model.num_data, "[GraphCell] output ", k,
                " updates data input ", *o.updates, "; only state inputs can be updated");
    impl_->updates.emplace_back(k, static_cast<size_t>(*o.updates) - model.num_data);
  }
  for (size_t i = names.output_names.size(); i < impl_->results.size(); ++i)
    names.output_names.push_back(detail::cat("output_", i));
  impl_->slots.reserve(model.state.size());
  for (size_t i = 0; i < model.state.size(); ++i) {
    const ir::Param& p = g.params()[model.num_data + i];
    const std::string& name = model.state_names[i];
    SPORE_CHECK(!ir::is_token(p.type) && fits(std::get<ir::TensorType>(p.type), model.state[i]), "[GraphCell] state '",
                name, "' is ", dtype_name(model.state[i].dtype()), shape_str(model.state[i].shape()),
                " but the graph expects ", ir::type_str(p.type));
    impl_->slots.push_back(model.state[i]);
    // Walk (creating) the scopes of the dotted name, then register the leaf.
    nn::Cell* owner = this;
    size_t start = 0;
    for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', start)) {
      const std::string path = name.substr(0, dot);
      auto it = impl_->scope_of.find(path);
      if (it == impl_->scope_of.end()) {
        impl_->scopes.push_back(std::make_unique<StateScope>());
        owner->register_cell(name.substr(start, dot - start), impl_->scopes.back().get());
        it = impl_->scope_of.emplace(path, impl_->scopes.back().get()).first;
      }
      owner = it->second;
      start = dot + 1;
    }
    if (p.role == ir::Role::Parameter)
      owner->register_parameter(name.substr(start), &impl_->slots.back());
    else
      owner->register_buffer(name.substr(start), &impl_->slots.back());
  }
}

GraphCell::~GraphCell() = default;

std::vector<Tensor> GraphCell::operator()(std::span<const Tensor> inputs) {
  const ir::Graph& g = *impl_->model.graph;
  const size_t n = impl_->model.num_data;
  const auto& in_names = impl_->model.input_names;
  if (inputs.size() != n) {
    std::string expected;
    for (size_t i = 0; i < n; ++i) expected += detail::cat(i ? ", " : "", in_names[i], ": ", ir::type_str(g.params()[i].type));
    throw Error(detail::cat("[GraphCell] the model takes ", n, " inputs (", expected, "), but ", inputs.size(),
                            " were given"));
  }
  for (size_t i = 0; i < n; ++i) {
    SPORE_CHECK(inputs[i].defined(), "[GraphCell] input ", i, " ('", in_names[i], "') is undefined");
    const ir::Type& want = g.params()[i].type;
    SPORE_CHECK(!ir::is_token(want) && fits(std::get<ir::TensorType>(want), inputs[i]), "[GraphCell] input ", i, " ('",
                in_names[i], "') is ", ir::type_str(transforms::to_ir(runtime::type_of(inputs[i]))),
                "; the model expects ", ir::type_str(want));
  }
  std::vector<Tensor> state(impl_->slots.begin(), impl_->slots.end());
  Impl& im = *impl_;
  autodiff::TreeFn run = [&im](const std::vector<TensorTree>& a) -> TensorTree {
    std::vector<Tensor> all = a[0].leaves();
    const std::vector<Tensor> st = a[1].leaves();
    all.insert(all.end(), st.begin(), st.end());
    std::vector<Tensor> outs = transforms::interpret(*im.model.graph, all);
    for (const auto& [k, j] : im.updates) write_state(st[j], outs[k]);
    std::vector<Tensor> res;
    for (size_t k : im.results) res.push_back(outs[k]);
    return TensorTree(std::move(res));
  };
  const std::vector<TensorTree> args{TensorTree(std::vector<Tensor>(inputs.begin(), inputs.end())), TensorTree(state)};
  return transforms::run_in_mode(impl_->jit, run, args).leaves();
}

const std::vector<std::string>& GraphCell::input_names() const { return impl_->model.input_names; }
const std::vector<std::string>& GraphCell::output_names() const { return impl_->model.output_names; }

std::vector<std::string> GraphCell::input_types() const {
  std::vector<std::string> r;
  for (size_t i = 0; i < impl_->model.num_data; ++i) r.push_back(ir::type_str(impl_->model.graph->params()[i].type));
  return r;
}

std::vector<std::string> GraphCell::output_types() const {
  std::vector<std::string> r;
  const ir::Graph& g = *impl_->model.graph;
  for (size_t k : impl_->results) r.push_back(ir::type_str(g.type_of(g.outputs()[k].value)));
  return r;
}

const std::map<std::string, std::string>& GraphCell::metadata() const { return impl_->model.metadata; }

std::string GraphCell::graph_text() const { return ir::print_graph(*impl_->model.graph); }

LoadedModel GraphCell::model() const {
  LoadedModel m = impl_->model;
  m.state.assign(impl_->slots.begin(), impl_->slots.end());
  return m;
}

}  // namespace spore::io
