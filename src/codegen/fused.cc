// SPDX-License-Identifier: Apache-2.0
#include "codegen/fused.h"

#include <algorithm>
#include <mutex>

#include "codegen/loop_interpreter.h"
#include "codegen/schedule.h"
#include "ir/error.h"
#include "ir/op_info.h"
#include "runtime/profile.h"
#include "spore/error.h"
#include "transforms/interpreter.h"
#include "transforms/ir_bridge.h"

namespace spore::codegen {
namespace {

struct Bound {
  const ir::GraphPtr& graph;
  const LoopProgram& program;
};

Bound bound(const void* attrs) {
  const auto& a = *static_cast<const FusedAttrs*>(attrs);
  if (a.graph && a.program) return {a.graph, *a.program};
  std::lock_guard lock(a.binding->mutex);
  SPORE_CHECK(a.binding->graph && a.binding->program, "[fused] the node's attributes carry no sub-graph (a node "
              "built without a type check); bind it with codegen::bind_fused_nodes(graph) before running it");
  return {a.binding->graph, *a.binding->program};
}

// Outputs: the sub-graph's result dtypes and weak flags over the inputs' broadcast shape (every
// op of the group has that shape, and the first op's inputs are group inputs or 0-d literals;
// a row program's reductions keep their dims, so the broadcast shape is their operands').
void infer(const FusedAttrs& attrs, std::span<const TensorType> in, OutTypes& out) {
  const Bound a = bound(&attrs);
  Shape s;
  for (const TensorType& t : in) s = broadcast_shapes(s, t.shape, "fused");
  SPORE_CHECK(a.graph->outputs().size() <= static_cast<size_t>(kMaxOutputs), "[fused] sub-graph @", a.graph->name(),
              " has ", a.graph->outputs().size(), " results; a fused node has at most ", kMaxOutputs);
  // A row program's per-row results: the iteration shape with the row dims 1.
  Shape rows = s;
  for (size_t d = rows.size() - std::min(rows.size(), static_cast<size_t>(a.program.row_dims)); d < rows.size(); ++d)
    rows[d] = 1;
  for (size_t j = 0; j < a.graph->outputs().size(); ++j) {
    const auto& t = std::get<ir::TensorType>(a.graph->type_of(a.graph->outputs()[j].value));
    const bool per_row = a.program.row_dims > 0 && a.program.row_output[j];
    out.add(transforms::from_ir(t.dtype), per_row ? rows : s).weak = t.weak;
  }
}

Cost cost(const FusedAttrs& attrs, std::span<const TensorType> in, std::span<const TensorType> out) {
  // Per element of the iteration space: the inputs' broadcast shape (a row program's first
  // output may be per row).
  Shape s;
  for (const TensorType& t : in) s = broadcast_shapes(s, t.shape, "fused");
  double n = 1;
  for (Dim d : s) n *= is_symbolic(d) ? 1 : static_cast<double>(d);
  double bytes = 0;
  for (const auto& t : in) {
    double m = 1;
    for (Dim d : t.shape) m *= is_symbolic(d) ? 1 : static_cast<double>(d);
    bytes += m * static_cast<double>(dtype_size(t.dtype));
  }
  for (const auto& t : out) {
    double m = 1;
    for (Dim d : t.shape) m *= is_symbolic(d) ? 1 : static_cast<double>(d);
    bytes += m * static_cast<double>(dtype_size(t.dtype));
  }
  return {n * (attrs.program ? attrs.program->cost : 1), bytes};
}

}  // namespace

void request_compiles(std::span<const void* const> fused_attrs) {
  std::vector<UnitKernel> ks;
  for (const void* a : fused_attrs) ks.push_back({&bound(a).program, static_cast<const FusedAttrs*>(a)->compiled.get()});
  request_unit(ks);
}

namespace {

// The kernel's profile label (runtime/profile.h) says which of the two ran.
void run(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const LoopProgram& p = bound(attrs).program;
  if (static_cast<const FusedAttrs*>(attrs)->compiled->try_run(p, in, out)) {
    runtime::profile::note_variant(kCompiledVariant);
    return;
  }
  runtime::profile::note_variant(kInterpretedVariant);
  int64_t numel = 0;  // the iteration space's (a row program's first output may be per row)
  for (const Buffer& b : out) numel = std::max(numel, b.numel());
  run_loop_program(p, make_schedule(p, numel), in, out);
}

// Transforms without a rule for `fused` (and backends without its kernel) run the ops it holds.
void decompose(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out) {
  out = transforms::interpret(*bound(attrs).graph, in);
}

const Primitive& fused_def() {
  static const Primitive& p = [] () -> const Primitive& {
    PrimitiveSpec<FusedAttrs> spec;
    spec.name = kFusedOp;
    spec.compiler_made = true;
    spec.infer = infer;
    spec.cost = cost;
    Primitive& q = const_cast<Primitive&>(define_primitive(spec));
    q.decomposition = decompose;
    // Layout-agnostic: it iterates in its outputs' memory order (codegen/geometry.h), so a plan
    // may store any of its operands or results channels-last.
    // Row programs walk rows of the row-major iteration space, so they take none.
    q.add_kernel({.device = DeviceType::CPU, .name = "fused", .run = run,
                  .takes_channels_last = [](const void* a, std::span<const TensorType>, int) {
                    return bound(a).program.row_dims == 0;
                  }});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (fused_def(), true);

void check(const ir::NodeSig& sig) {
  if (sig.subgraphs.size() != 1)
    throw ir::Error(ir::cat("[fused] holds exactly one sub-graph, the node has ", sig.subgraphs.size()));
  const ir::Graph& g = *sig.subgraphs[0];
  if (g.params().size() != sig.inputs.size())
    throw ir::Error(ir::cat("[fused] takes ", sig.inputs.size(), " operands but its sub-graph @", g.name(), " has ",
                            g.params().size(), " parameters; give one operand per parameter"));
  for (size_t i = 0; i < sig.inputs.size(); ++i)
    if (!(sig.inputs[i] == g.params()[i].type))
      throw ir::Error(ir::cat("[fused] operand ", i, " is ", ir::type_str(sig.inputs[i]), " but parameter ", i,
                              " of sub-graph @", g.name(), " is ", ir::type_str(g.params()[i].type)));
  if (g.outputs().size() != sig.outputs.size())
    throw ir::Error(ir::cat("[fused] declares ", sig.outputs.size(), " outputs but sub-graph @", g.name(), " returns ",
                            g.outputs().size()));
  if (sig.outputs.size() > static_cast<size_t>(kMaxOutputs))
    throw ir::Error(ir::cat("[fused] has ", sig.outputs.size(), " outputs; at most ", kMaxOutputs, " (split the group)"));
  for (size_t i = 0; i < sig.outputs.size(); ++i)
    if (!(sig.outputs[i] == g.type_of(g.outputs()[i].value)))
      throw ir::Error(ir::cat("[fused] output ", i, " is declared ", ir::type_str(sig.outputs[i]), " but sub-graph @",
                              g.name(), " returns ", ir::type_str(g.type_of(g.outputs()[i].value))));
  const auto* a = static_cast<const FusedAttrs*>(sig.attrs);
  auto differs = [&](const ir::GraphPtr& h) { return h && h != sig.subgraphs[0] && !(*h == g); };
  if (a && differs(a->graph))
    throw ir::Error("[fused] the node's attributes hold another graph than its sub-graph (a pass replaced the "
                    "sub-graph without codegen::bind_fused); internal error");
  std::shared_ptr<const LoopProgram> program;
  try {
    program = std::make_shared<const LoopProgram>(lower(g));
  } catch (const Error& e) {
    throw ir::Error(e.what());
  }
  // A parsed node: bind its attributes to the sub-graph now, so that it runs.
  if (a && !a->graph && a->binding) {
    std::lock_guard lock(a->binding->mutex);
    if (differs(a->binding->graph)) throw ir::Error("[fused] the node's attributes are bound to another sub-graph");
    if (!a->binding->graph) {
      a->binding->graph = sig.subgraphs[0];
      a->binding->program = std::move(program);
    }
  }
}

}  // namespace

const Primitive& fused_primitive() { return fused_def(); }

bool fused_in_place_safe(const void* attrs) {
  const LoopProgram& p = bound(attrs).program;
  // A row program reads its inputs again in later segments, after earlier ones stored.
  if (p.row_dims > 0) return false;
  std::vector<bool> loaded(static_cast<size_t>(p.num_registers), false);
  for (const Instr& i : p.code) {
    if (i.kind == InstrKind::Load) loaded[static_cast<size_t>(i.dst)] = true;
    if (i.kind == InstrKind::Store && loaded[static_cast<size_t>(i.a)]) return false;
  }
  return true;
}

std::shared_ptr<const FusedAttrs> fused_attrs(const ir::GraphPtr& g) {
  auto a = std::make_shared<FusedAttrs>();
  a->graph = g;
  a->program = std::make_shared<const LoopProgram>(lower(*g));
  return a;
}

void register_fused_ir_op() {
  static std::once_flag once;
  std::call_once(once, [] {
    transforms::register_ir_ops();
    const ir::OpInfo* generic = ir::find_op(kFusedOp);
    SPORE_ASSERT(generic != nullptr, "the fused primitive is not registered with the IR");
    ir::OpInfo info = *generic;
    info.check = check;
    ir::register_op(kFusedOp, std::move(info));
  });
}

ir::NodePtr bind_fused(const ir::NodePtr& n) {
  if (n->op() != kFusedOp || n->subgraphs().size() != 1) return n;
  const auto* a = static_cast<const FusedAttrs*>(n->attrs());
  if (a && a->graph == n->subgraphs()[0] && a->program) return n;  // (a parsed node bound by its check is rebuilt too)
  return std::make_shared<const ir::Node>(n->op(), fused_attrs(n->subgraphs()[0]), n->inputs(), n->outputs(), n->scope(),
                                          n->subgraphs());
}

ir::GraphPtr bind_fused_nodes(const ir::GraphPtr& g) {
  std::vector<ir::NodePtr> nodes;
  bool changed = false;
  for (const ir::NodePtr& n : g->nodes()) {
    ir::NodePtr m = n;
    if (n->op() == kFusedOp) {
      m = bind_fused(n);
    } else if (!n->subgraphs().empty()) {
      // Fused nodes inside control flow: the sub-graphs are rebuilt, so the node's own
      // attributes (control flow keeps its graphs there too) are left to the caller's pass.
      std::vector<ir::GraphPtr> subs;
      bool sub_changed = false;
      for (const ir::GraphPtr& s : n->subgraphs()) {
        subs.push_back(bind_fused_nodes(s));
        sub_changed = sub_changed || subs.back() != s;
      }
      SPORE_CHECK(!sub_changed, "[fused] bind_fused_nodes: unbound fused nodes inside a '", n->op(),
                  "' node's sub-graphs; bind them with the fusion pass (passes::fuse_elementwise), which rebuilds the "
                  "control-flow node's attributes");
    }
    changed = changed || m != n;
    nodes.push_back(std::move(m));
  }
  if (!changed) return g;
  return std::make_shared<const ir::Graph>(g->name(), g->params(), std::move(nodes), g->outputs());
}

}  // namespace spore::codegen
