// SPDX-License-Identifier: Apache-2.0
#include "spore/io/model_file.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "core/primitive.h"
#include "io/formats.h"
#include "io/onnx/tensor_proto.h"
#include "ir/printer.h"
#include "passes/pipeline.h"
#include "runtime/dispatch.h"
#include "spore/error.h"
#include "spore/io/npy.h"
#include "spore/ops/creation.h"
#include "transforms/interpreter.h"
#include "transforms/ir_bridge.h"

namespace spore::io {

struct ModelFile::Impl {
  std::string path;
  std::string format;
  LoadedModel m;
  std::vector<ValueInfo> inputs, outputs;
  // One compiled plan per input signature for Graph-mode runs; rebuilt after optimize().
  std::shared_ptr<transforms::JitCore> jit = std::make_shared<transforms::JitCore>("model");
};

namespace {

const ir::Type& value_type(const ir::Graph& g, ir::ValueRef v) {
  if (v.node == ir::ValueRef::kParam) return g.params()[static_cast<size_t>(v.index)].type;
  return g.nodes()[static_cast<size_t>(v.node)]->outputs()[static_cast<size_t>(v.index)];
}

ValueInfo info_of(const std::string& name, const ir::Type& t) {
  ValueInfo info;
  info.name = name;
  info.type_text = ir::type_str(t);
  const auto* tt = std::get_if<ir::TensorType>(&t);
  SPORE_CHECK(tt != nullptr, "[model] value '", name, "' is an ordering token, not a tensor; a model's inputs and "
              "outputs must be tensors");
  info.dtype = transforms::from_ir(tt->dtype);
  for (const ir::Dim& d : tt->shape) {
    info.dims.push_back(d.is_const() ? d.value() : -1);
    info.dim_names.push_back(d.is_const() ? std::string() : d.str());
  }
  return info;
}

// The positions of the data outputs: a model file's state updates (a training graph's
// BatchNorm statistics) are not results of an inference run, wherever they stand.
std::vector<size_t> result_positions(const ir::Graph& g) {
  std::vector<size_t> at;
  for (size_t i = 0; i < g.outputs().size(); ++i)
    if (!g.outputs()[i].updates) at.push_back(i);
  return at;
}

void count_ops(const ir::Graph& g, std::map<std::string, int64_t>& hist) {
  for (const auto& n : g.nodes()) {
    if (n->op() != transforms::kConstantOp) ++hist[n->op()];
    for (const auto& sub : n->subgraphs()) count_ops(*sub, hist);
  }
}

std::string shape_text(const Tensor& t) {
  std::string s = std::string(dtype_name(t.dtype())) + "[";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

}  // namespace

Tensor read_tensor_file(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  SPORE_CHECK(std::filesystem::is_regular_file(path), "[tensor file] '", path, "' is not a readable file");
  if (ext == ".npy") return load_npy(path);
  if (ext == ".pb") return read_tensor_proto(path);
  throw Error("[tensor file] cannot tell the format of '" + path +
              "': inputs are numpy .npy files or ONNX TensorProto .pb files");
}

std::string detect_format(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  SPORE_CHECK(in.good(), "[model] cannot open '", path, "'");
  char head[8] = {};
  in.read(head, sizeof head);
  const auto n = static_cast<size_t>(in.gcount());
  if (n == 8 && (std::memcmp(head, "SPOREMIR", 8) == 0 || std::memcmp(head, "SPOREENC", 8) == 0)) return "mindir";
  SPORE_CHECK(!(n >= 6 && std::memcmp(head, "\x93NUMPY", 6) == 0), "[model] '", path,
              "' is a .npy tensor file, not a model; models are MindIR (.mindir) or ONNX (.onnx) files");
  // An ONNX file is a bare protobuf ModelProto: no magic, but it starts with a field tag. Its
  // first field is almost always ir_version (tag 0x08); the importer checks the rest.
  const auto tag = static_cast<unsigned char>(head[0]);
  const bool protobuf_like = n > 0 && (tag & 7) <= 5 && (tag >> 3) >= 1 && (tag >> 3) <= 20;
  SPORE_CHECK(protobuf_like || std::filesystem::path(path).extension() == ".onnx", "[model] '", path,
              "' is neither a MindIR file (no SPOREMIR magic) nor an ONNX model (not a protobuf message)");
  return "onnx";
}

ModelFile::ModelFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ModelFile::~ModelFile() = default;
ModelFile::ModelFile(ModelFile&&) noexcept = default;
ModelFile& ModelFile::operator=(ModelFile&&) noexcept = default;

ModelFile ModelFile::open(const std::string& path, const std::optional<ModelKey>& key) {
  SPORE_CHECK(std::filesystem::is_regular_file(path), "[model] '", path, "' is not a readable file");
  transforms::register_ir_ops();  // the readers resolve op names through the IR's op table
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->format = detect_format(path);
  SPORE_CHECK(!key.has_value() || impl->format == "mindir", "[model] a key was given for '", path,
              "', an ONNX file; only MindIR files are encrypted");
  impl->m = impl->format == "mindir" ? read_mindir(path, key) : import_onnx(path);
  const LoadedModel& m = impl->m;
  SPORE_CHECK(m.graph != nullptr && m.input_names.size() == m.num_data && m.state.size() == m.state_names.size() &&
                  m.num_data + m.state.size() == m.graph->params().size(),
              "[model] '", path, "': the reader returned an inconsistent model (a bug in the ", impl->format,
              " reader)");
  for (size_t i = 0; i < m.num_data; ++i) impl->inputs.push_back(info_of(m.input_names[i], m.graph->params()[i].type));
  const std::vector<size_t> results = result_positions(*m.graph);
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string name = i < m.output_names.size() ? m.output_names[i] : "output_" + std::to_string(i);
    impl->outputs.push_back(info_of(name, value_type(*m.graph, m.graph->outputs()[results[i]].value)));
  }
  return ModelFile(std::move(impl));
}

const std::string& ModelFile::format() const { return impl_->format; }
const std::string& ModelFile::path() const { return impl_->path; }
const std::vector<ValueInfo>& ModelFile::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& ModelFile::outputs() const { return impl_->outputs; }
const std::map<std::string, std::string>& ModelFile::metadata() const { return impl_->m.metadata; }
std::string ModelFile::ir_text() const { return ir::print_graph(*impl_->m.graph); }

namespace {

// Checks the call's inputs against the declared ones; a symbol must have one size everywhere.
void check_inputs(const std::string& path, const std::vector<ValueInfo>& want, std::span<const Tensor> given) {
  SPORE_CHECK(given.size() == want.size(), "[model] '", path, "' takes ", want.size(), " input(s), got ",
              given.size());
  std::map<std::string, int64_t> symbols;
  for (size_t i = 0; i < want.size(); ++i) {
    const ValueInfo& w = want[i];
    const Tensor& t = given[i];
    bool ok = t.defined() && t.dtype() == w.dtype && t.dim() == static_cast<int64_t>(w.dims.size());
    for (size_t d = 0; ok && d < w.dims.size(); ++d) {
      const int64_t have = t.size(static_cast<int64_t>(d));
      if (w.dims[d] >= 0) {
        ok = have == w.dims[d];
      } else if (!symbols.emplace(w.dim_names[d], have).second) {
        ok = symbols[w.dim_names[d]] == have;
      }
    }
    SPORE_CHECK(ok, "[model] input ", i, " '", w.name, "' of '", path, "' must be ", w.type_text, ", got ",
                t.defined() ? shape_text(t) : std::string("an undefined tensor"),
                " (symbolic dimensions must agree across inputs)");
  }
}

}  // namespace

std::vector<Tensor> ModelFile::run(std::span<const Tensor> inputs, Mode mode) const {
  check_inputs(impl_->path, impl_->inputs, inputs);
  const LoadedModel& m = impl_->m;
  const std::vector<size_t> results = result_positions(*m.graph);
  auto interpret_all = [&m, &results](std::span<const Tensor> data) {
    std::vector<Tensor> all(data.begin(), data.end());
    all.insert(all.end(), m.state.begin(), m.state.end());
    std::vector<Tensor> out = transforms::interpret(*m.graph, all);
    std::vector<Tensor> picked;
    for (size_t at : results) picked.push_back(out[at]);
    return picked;
  };
  if (mode == Mode::PyNative) return interpret_all(inputs);
  // Graph mode: the interpreter's dispatches are traced into one graph, optimized and compiled.
  autodiff::TreeFn fn = [&](const std::vector<TensorTree>& args) { return TensorTree(interpret_all(args[0].leaves())); };
  TensorTree out = impl_->jit->call(fn, {TensorTree(std::vector<Tensor>(inputs.begin(), inputs.end()))});
  return out.leaves();
}

std::vector<LayerValue> ModelFile::run_layers(std::span<const Tensor> inputs, Mode mode, DType storage) const {
  check_inputs(impl_->path, impl_->inputs, inputs);
  SPORE_CHECK(storage == DType::Float32 || storage == DType::Float16 || storage == DType::BFloat16,
              "[model] layer values can be rounded to float16 or bfloat16, not ", dtype_name(storage));
  const LoadedModel& m = impl_->m;
  auto round = [storage](const Tensor& t) {
    return storage != DType::Float32 && t.dtype() == DType::Float32 ? t.to(storage).to(DType::Float32) : t;
  };
  std::vector<LayerValue> layers;  // names and ops (values are filled below)
  auto run_all = [&](std::span<const Tensor> data) {
    layers.clear();
    std::vector<Tensor> all(data.begin(), data.end()), values;
    for (const Tensor& t : m.state) all.push_back(round(t));
    transforms::interpret(*m.graph, all,
                          [&](size_t k, const ir::Node& n, std::span<const Tensor>, std::span<Tensor> outs) {
                            if (n.op() == transforms::kConstantOp) return;
                            const std::string base = n.scope().empty() ? n.op() + "#" + std::to_string(k) : n.scope();
                            for (size_t j = 0; j < outs.size(); ++j) {
                              if (!outs[j].defined()) continue;
                              outs[j] = round(outs[j]);
                              layers.push_back({outs.size() > 1 ? base + ":" + std::to_string(j) : base, n.op(), k, {}});
                              values.push_back(outs[j]);
                            }
                          });
    return values;
  };
  std::vector<Tensor> values;
  if (mode == Mode::PyNative) {
    values = run_all(inputs);
  } else {
    // Every layer value becomes an output of the traced graph, so the plan must materialize it.
    transforms::JitCore core("layers");
    autodiff::TreeFn fn = [&](const std::vector<TensorTree>& args) { return TensorTree(run_all(args[0].leaves())); };
    values = core.call(fn, {TensorTree(std::vector<Tensor>(inputs.begin(), inputs.end()))}).leaves();
  }
  SPORE_CHECK(values.size() == layers.size(), "[model] internal: ", values.size(), " layer values for ", layers.size(),
              " layers");
  for (size_t i = 0; i < values.size(); ++i) layers[i].value = values[i];
  // A layer (a Cell, an ONNX node) often lowers to several primitives in one scope: its value
  // is the last one's output.
  std::vector<LayerValue> merged;
  for (LayerValue& l : layers) {
    if (!merged.empty() && merged.back().layer == l.layer) merged.pop_back();
    merged.push_back(std::move(l));
  }
  return merged;
}

ModelSummary ModelFile::summary() const {
  const LoadedModel& m = impl_->m;
  ModelSummary s;
  for (const Tensor& t : m.state) {
    s.parameters += t.numel();
    s.parameter_bytes += t.numel() * static_cast<int64_t>(t.itemsize());
  }
  count_ops(*m.graph, s.op_histogram);
  std::vector<Tensor> zeros_in;
  for (const ValueInfo& v : impl_->inputs) {
    Shape shape;
    for (int64_t d : v.dims) shape.push_back(d >= 0 ? d : 1);
    zeros_in.push_back(ops::zeros(shape, {v.dtype}));
  }
  std::vector<Tensor> all(zeros_in.begin(), zeros_in.end());
  all.insert(all.end(), m.state.begin(), m.state.end());
  std::vector<TensorType> in_types, out_types;
  try {
    transforms::interpret(*m.graph, all,
                        [&](size_t, const ir::Node& n, std::span<const Tensor> ins, std::span<Tensor> outs) {
                          const Primitive* p = find_primitive(n.op());
                          if (p == nullptr || !p->cost) return;  // constants; control flow prices no body
                          in_types.clear();
                          out_types.clear();
                          for (const Tensor& t : ins) in_types.push_back(runtime::type_of(t));
                          for (const Tensor& t : outs) out_types.push_back(runtime::type_of(t));
                          s.flops += p->cost(n.attrs(), in_types, out_types).flops;
                        });
  } catch (const Error& e) {
    s.flops = 0;
    s.flops_unknown = std::string("the zero inputs it is priced on do not run (sizes that input values give?): ") + e.what();
  }
  return s;
}

void ModelFile::optimize() {
  impl_->m.graph = passes::optimize(impl_->m.graph, passes::default_level());
  impl_->jit = std::make_shared<transforms::JitCore>("model");
}

void ModelFile::save(const std::string& path, const std::optional<ModelKey>& key) const {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".mindir") return write_mindir(impl_->m, path, key);
  SPORE_CHECK(!key.has_value() || ext != ".onnx", "[model] cannot encrypt '", path,
              "': ONNX files have no encrypted form; write a .mindir file to encrypt it");
  if (ext == ".onnx") return export_onnx(impl_->m, path);
  throw Error("[model] cannot tell the format to write from '" + path +
              "': name the file .mindir (MindIR) or .onnx (ONNX)");
}

}  // namespace spore::io
