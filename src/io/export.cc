// SPDX-License-Identifier: Apache-2.0
// export_mindir: a symbolic trace of the model function (the one jit makes), whose captured
// tensors become the model's state, stored by value.
#include "autodiff/frames.h"
#include "io/loaded_model.h"
#include "io/mindir_file.h"
#include "ir/verifier.h"
#include "runtime/dispatch.h"
#include "spore/io/mindir.h"
#include "transforms/trace.h"

namespace spore::io {
namespace {

bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.is_same(b) || (a.storage() == b.storage() && a.offset() == b.offset() && a.shape() == b.shape() &&
                          a.strides() == b.strides() && a.dtype() == b.dtype());
}

LoadedModel trace_model(const ModelFn& fn, const std::vector<Tensor>& example_inputs, nn::Cell* cell,
                        const ExportOptions& options) {
  transforms::SymbolicTrace trace("main");
  trace.allow_state();
  std::vector<Tensor> outs;
  {
    autodiff::FrameGuard open(&trace);
    std::vector<Tensor> sym;
    for (size_t i = 0; i < example_inputs.size(); ++i) {
      SPORE_CHECK(example_inputs[i].defined(), "[export_mindir] example input ", i, " is undefined");
      sym.push_back(trace.input(runtime::type_of(example_inputs[i])));
    }
    outs = fn(sym);
  }
  ir::GraphPtr g = trace.finish(outs);
  const std::vector<Tensor>& captured = trace.captured();
  LoadedModel m;
  m.num_data = example_inputs.size();
  std::vector<ir::Param> params = g->params();
  std::vector<std::pair<std::string, Tensor>> named_params, named_buffers;
  if (cell != nullptr) {
    named_params = cell->named_parameters();
    named_buffers = cell->named_buffers();
  }
  for (size_t i = 0; i < captured.size(); ++i) {
    ir::Param& p = params[m.num_data + i];
    std::string name = detail::cat("const_", i);
    for (const auto& [n, t] : named_params)
      if (same_tensor(t, captured[i])) {
        name = n;
        p.role = ir::Role::Parameter;
      }
    for (const auto& [n, t] : named_buffers)
      if (same_tensor(t, captured[i])) {
        name = n;
        p.role = ir::Role::Buffer;
      }
    m.state_names.push_back(name);
    m.state.push_back(captured[i]);
  }
  m.graph = std::make_shared<const ir::Graph>(g->name(), std::move(params), g->nodes(), g->outputs());
  ir::verify(*m.graph);
  m.input_names = options.input_names;
  m.output_names = options.output_names;
  m.metadata = options.metadata;
  m.metadata["producer"] = options.producer;
  m.metadata["producer_version"] = options.producer_version;
  if (!options.preprocessing.empty()) m.metadata["preprocessing"] = options.preprocessing;
  return m;
}

}  // namespace

void export_mindir(const ModelFn& fn, const std::vector<Tensor>& example_inputs, const std::string& path,
                   const ExportOptions& options) {
  write_mindir(trace_model(fn, example_inputs, nullptr, options), path, options.key);
}

void export_mindir(nn::Cell& cell, const ModelFn& fn, const std::vector<Tensor>& example_inputs,
                   const std::string& path, const ExportOptions& options) {
  write_mindir(trace_model(fn, example_inputs, &cell, options), path, options.key);
}

void save_mindir(const GraphCell& cell, const std::string& path, const std::optional<ModelKey>& key) {
  write_mindir(cell.model(), path, key);
}

GraphCell load_mindir(const std::string& path, const std::optional<ModelKey>& key) {
  return GraphCell(read_mindir(path, key));
}

}  // namespace spore::io
