// SPDX-License-Identifier: Apache-2.0
#include "passes/lower_plan.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <omp.h>

#include "codegen/fused.h"
#include "passes/plan_family.h"
#include "passes/plan_layout.h"
#include "passes/plan_memory.h"
#include "transforms/symbol_binding.h"
#include "runtime/dispatch.h"
#include "spore/threading.h"
#include "transforms/control_flow.h"
#include "transforms/ir_bridge.h"
#include "transforms/plan_lowerer.h"

namespace spore::passes {
namespace {

using runtime::Plan;
using runtime::Slot;
using runtime::SlotKind;
using runtime::Step;

constexpr size_t kAlign = 64;
constexpr int64_t kNoStep = -1;

struct Lowering {
  Plan& plan;
  std::vector<int64_t> producer;   // per slot: the step that writes it (kNoStep: inputs, literals, views)
  std::vector<int64_t> last_read;  // per root slot: the last step reading it or a view of it

  int32_t add_slot(Slot s, int64_t step) {
    plan.slots.push_back(std::move(s));
    producer.push_back(step);
    last_read.push_back(kNoStep);
    return static_cast<int32_t>(plan.slots.size() - 1);
  }
  int32_t root(int32_t s) const {
    const Slot& sl = plan.slots[static_cast<size_t>(s)];
    return sl.kind == SlotKind::View ? sl.base : s;
  }
  TensorType type(int32_t s) const {
    const Slot& sl = plan.slots[static_cast<size_t>(s)];
    return {sl.dtype, sl.weak, sl.shape};
  }
  int32_t add_value(const TensorType& t, int64_t step) {
    Slot s;
    s.kind = SlotKind::Arena;
    s.dtype = t.dtype;
    s.weak = t.weak;
    s.shape = t.shape;
    s.strides = contiguous_strides(t.shape);
    return add_slot(std::move(s), step);
  }
};

void check_input(const ir::Graph& g, size_t i, const Tensor& t) {
  const auto& want = std::get<ir::TensorType>(g.params()[i].type);
  const TensorType have = runtime::type_of(t);
  bool ok = transforms::to_ir(have).dtype == want.dtype && want.shape.size() == have.shape.size();
  for (size_t d = 0; ok && d < want.shape.size(); ++d)
    ok = !want.shape[d].is_const() || want.shape[d].value() == have.shape[d];
  SPORE_CHECK(ok, "[lower_plan] input ", i, " of @", g.name(), " is ", dtype_name(have.dtype), shape_str(have.shape),
              "; the graph expects ", ir::type_str(want));
}

// A view primitive's result as (root, element offset, strides), found by applying it to a
// tensor of the input's geometry on memory-less storage. Null when the result is not a view
// (a reshape of strided memory copies): the plan then runs it as a step.
std::optional<Slot> view_geometry(const Primitive& p, const void* attrs, const Lowering& l, int32_t in,
                                  const TensorType& out) {
  static const auto nowhere = std::make_shared<Storage>(kMeta, 0);
  const Slot& src = l.plan.slots[static_cast<size_t>(in)];
  const int64_t offset = src.kind == SlotKind::View ? static_cast<int64_t>(src.offset) : 0;
  Tensor t = Tensor::view_of(nowhere, src.shape, src.strides, offset, src.dtype);
  t.impl()->weak = src.weak;
  const Tensor r = p.view(attrs, t, out);
  if (r.storage() != nowhere || r.dtype() != src.dtype) return std::nullopt;
  Slot s;
  s.kind = SlotKind::View;
  s.dtype = r.dtype();
  s.weak = out.weak;
  s.shape = r.shape();
  s.strides = r.strides();
  s.base = l.root(in);
  s.offset = static_cast<size_t>(r.offset());
  return s;
}

const KernelDef& choose_kernel(const Primitive& p, const void* attrs, std::span<const TensorType> in) {
  for (const KernelDef& k : p.kernels[static_cast<int>(DeviceType::CPU)])
    if (!k.supports || k.supports(attrs, in)) return k;
  throw Error(detail::cat("[", p.name, "] has no cpu kernel for these inputs"));
}

// The step writing slot `v` may write over input slot `in` (same memory) while it reads it: an
// elementwise kernel with one output of the input's geometry reads each element before writing
// it; so does a fused group, with any number of outputs (an SGD update writes the momentum and
// the parameter), when it stores no input passed through (codegen::fused_in_place_safe).
// Control-flow steps write their slots after they ran.
bool in_place_safe(const Step& st, const Lowering& l, int32_t in) {
  if (st.prim->eager != nullptr) return true;
  const bool fused = st.prim->name == codegen::kFusedOp;
  if (fused) {
    if (!codegen::fused_in_place_safe(st.attrs.get())) return false;
  } else if (st.prim->fusion != FusionClass::Elementwise || st.out.size() != 1) {
    return false;
  }
  for (int32_t s : st.in)
    if (l.root(s) == in && s != in) return false;  // read through a view: other elements
  return true;
}

// Marks the state outputs that can write straight into their input (see lower_plan.h).
void donate(const ir::Graph& g, Lowering& l, const std::vector<int32_t>& out_slots, std::vector<int32_t>& param_slot) {
  Plan& plan = l.plan;
  for (size_t o = 0; o < out_slots.size(); ++o) {
    const auto& upd = g.outputs()[o].updates;
    if (!upd) continue;
    const int32_t v = out_slots[o];
    const int32_t in = param_slot[static_cast<size_t>(*upd)];
    const Slot& vs = plan.slots[static_cast<size_t>(v)];
    const Slot& is = plan.slots[static_cast<size_t>(in)];
    if (vs.kind != SlotKind::Arena || l.producer[static_cast<size_t>(v)] == kNoStep) continue;
    if (vs.dtype != is.dtype || !(vs.shape == is.shape)) continue;
    // No other output may show the old value of input j, or this value under another name.
    bool shared = false;
    for (size_t k = 0; k < out_slots.size(); ++k) {
      const int32_t r = l.root(out_slots[k]);
      if (k != o && (r == v || r == in)) shared = true;
    }
    if (shared) continue;
    const int64_t s = l.producer[static_cast<size_t>(v)];
    const int64_t last = l.last_read[static_cast<size_t>(in)];
    if (last > s || (last == s && !in_place_safe(plan.steps[static_cast<size_t>(s)], l, in))) continue;
    Slot& d = plan.slots[static_cast<size_t>(v)];
    d.kind = SlotKind::Donated;
    d.index = *upd;
  }
}

// Marks the steps that read only parameters and captured tensors the graph never writes (and
// literals, and what such steps made): see Plan::invariant_inputs.
constexpr size_t kKeptLiteralBytes = size_t{1} << 20;

void mark_invariant(const ir::Graph& g, Plan& plan, const std::vector<char>& sized) {
  std::vector<char> inv(plan.slots.size(), 0);
  std::vector<char> written(g.params().size(), 0);
  for (const ir::Output& o : g.outputs())
    if (o.updates) written[static_cast<size_t>(*o.updates)] = 1;
  for (size_t s = 0; s < plan.slots.size(); ++s) {
    const Slot& sl = plan.slots[s];
    if (sl.kind == SlotKind::Constant) inv[s] = 1;
    if (sl.kind == SlotKind::Input) {
      const ir::Role r = g.params()[static_cast<size_t>(sl.index)].role;
      inv[s] = (r == ir::Role::Constant || r == ir::Role::Parameter) && !written[static_cast<size_t>(sl.index)];
    }
  }
  std::vector<char> used_input(plan.slots.size(), 0);
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    Step& st = plan.steps[k];
    // A step bound to this call's sizes (a fill of n rows) is remade per call: the plans of one
    // symbolic graph at other sizes share the invariant results (plan_family.h).
    bool ok = st.kernel != nullptr && st.prim->effect == Effect::Pure && !sized[k];
    for (int32_t s : st.in) {
      const Slot& sl = plan.slots[static_cast<size_t>(s)];
      ok = ok && inv[static_cast<size_t>(sl.kind == SlotKind::View ? sl.base : s)];
    }
    size_t out_bytes = 0;
    for (int32_t s : st.out) {
      const Slot& sl = plan.slots[static_cast<size_t>(s)];
      ok = ok && sl.kind == SlotKind::Arena;
      out_bytes += static_cast<size_t>(numel_of(sl.shape)) * dtype_size(sl.dtype);
    }
    // A large result made from literals alone (a zero fill the size of an activation, as max
    // pooling's gradient scatters into) is remade each call: one write pass, where keeping it
    // holds its bytes across the whole step, through the peak (51 MB in a ResNet-18 step).
    if (st.in.empty() && out_bytes > kKeptLiteralBytes) ok = false;
    if (!ok) continue;
    st.invariant = true;
    plan.has_invariant_steps = true;
    for (int32_t s : st.out) {
      inv[static_cast<size_t>(s)] = 1;
      plan.slots[static_cast<size_t>(s)].invariant = true;
    }
    for (int32_t s : st.in) {
      const Slot& sl = plan.slots[static_cast<size_t>(s)];
      const int32_t root = sl.kind == SlotKind::View ? sl.base : s;
      if (plan.slots[static_cast<size_t>(root)].kind == SlotKind::Input) used_input[static_cast<size_t>(root)] = 1;
    }
  }
  for (size_t s = 0; s < plan.slots.size(); ++s)
    if (used_input[s]) plan.invariant_inputs.push_back(static_cast<int32_t>(s));
}

// Prepares each step's kernel for its slots' types, layouts included.
void prepare_kernels(Plan& plan) {
  std::vector<TensorType> in, out;
  for (Step& st : plan.steps) {
    if (st.kernel == nullptr) continue;
    auto type = [&](int32_t s) { return plan.slots[static_cast<size_t>(s)].type(); };
    in.clear(), out.clear();
    for (int32_t s : st.in) in.push_back(type(s));
    for (int32_t s : st.out) out.push_back(type(s));
    // A kernel picked for row-major types may not take the layouts assign_layouts chose (a
    // plain-NCHW max pool ahead of oneDNN's, which computes channels-last): dispatch again.
    if (st.kernel->supports != nullptr && !st.kernel->supports(st.attrs.get(), in))
      st.kernel = &choose_kernel(*st.prim, st.attrs.get(), in);
    if (st.kernel->run != nullptr) continue;
    st.prepared = st.kernel->prepare(st.attrs.get(), in, out);
    SPORE_ASSERT(st.prepared != nullptr, "kernel ", st.kernel->name, " of ", st.prim->name, " failed to prepare");
    st.scratch_bytes = st.prepared->scratch_bytes();
  }
}

// The values the arena holds and each kernel's scratch, with their lifetimes.
ArenaBuffers arena_buffers(const Lowering& l) {
  const Plan& plan = l.plan;
  ArenaBuffers b;
  for (size_t s = 0; s < plan.slots.size(); ++s) {
    const Slot& sl = plan.slots[s];
    if (sl.kind != SlotKind::Arena) continue;
    const int64_t first = l.producer[s];
    SPORE_ASSERT(first != kNoStep, "arena slot ", s, " has no producing step");
    const size_t bytes = static_cast<size_t>(numel_of(sl.shape)) * dtype_size(sl.dtype);
    // An invariant step's result must outlive the call: later calls read it without remaking it.
    const int64_t last = sl.invariant ? static_cast<int64_t>(plan.steps.size()) : std::max(first, l.last_read[s]);
    b.lives.push_back({bytes, sl.invariant ? 0 : first, last});
    b.slot.push_back(static_cast<int32_t>(s));
    b.step.push_back(0);
    b.invariant.push_back(sl.invariant ? 1 : 0);
  }
  // A kernel's scratch (oneDNN's reorders, a pool's other layout) is one more buffer, live for
  // its step only: it reuses memory the step's neighbours are done with, where one region past
  // the planned values cost the largest scratch on top of the peak (61 MB, the stem's weight
  // gradient reorders, in a ResNet-18 training step).
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const size_t bytes = plan.steps[k].scratch_bytes;
    if (bytes == 0) continue;
    b.lives.push_back({bytes, static_cast<int64_t>(k), static_cast<int64_t>(k)});
    b.slot.push_back(-1);
    b.step.push_back(k);
    b.invariant.push_back(0);
  }
  return b;
}

// Lays out the arena: in the family's layout when the plan joins it (one size of a symbolic
// graph), else by plan_memory for this plan alone.
void plan_arena(Lowering& l, runtime::PlanFamily* family, int64_t n) {
  Plan& plan = l.plan;
  const ArenaBuffers b = arena_buffers(l);
  size_t scratch = 0;
  for (size_t k = 0; k < plan.steps.size(); ++k) scratch = std::max(scratch, plan.steps[k].scratch_bytes);
  plan.memory.scratch_bytes = (scratch + kAlign - 1) & ~(kAlign - 1);
  if (family != nullptr && family->adopt(plan, n, b)) return;
  const MemoryLayout layout = plan_memory(b.lives, kAlign);
  for (size_t i = 0; i < b.lives.size(); ++i) {
    if (b.slot[i] >= 0) plan.slots[static_cast<size_t>(b.slot[i])].offset = layout.offsets[i];
    else plan.steps[b.step[i]].scratch_offset = layout.offsets[i];
  }
  plan.memory.arena_bytes = layout.peak;
  plan.memory.intermediate_bytes = layout.total;
}

}  // namespace

std::shared_ptr<Plan> lower_plan(const ir::Graph& g, std::span<const Tensor> inputs,
                                 std::shared_ptr<runtime::PlanFamily>* family) {
  SPORE_CHECK(inputs.size() == g.params().size(), "[lower_plan] graph @", g.name(), " takes ", g.params().size(),
              " inputs, got ", inputs.size());
  // Kernels are prepared at the thread count they run at: oneDNN sizes its scratchpads (and so
  // picks Winograd or direct under its scratchpad cap) from the OpenMP thread count, which is per
  // calling thread until dispatch or a plan call sets it.
  if (omp_get_max_threads() != num_threads()) omp_set_num_threads(num_threads());
  auto plan = std::make_shared<Plan>();
  plan->name = g.name();
  plan->threads = num_threads();
  plan->pool = runtime::make_arena_pool();
  Lowering l{*plan, {}, {}};
  std::vector<int32_t> param_slot;
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_input(g, i, inputs[i]);
    const TensorType t = runtime::type_of(inputs[i]);
    plan->inputs.push_back(t);
    Slot s;
    s.kind = SlotKind::Input;
    s.dtype = t.dtype;
    s.weak = t.weak;
    s.shape = t.shape;
    s.strides = contiguous_strides(t.shape);
    s.index = static_cast<int64_t>(i);
    param_slot.push_back(l.add_slot(std::move(s), kNoStep));
  }
  // A graph with symbolic input dimensions (a jit function's dynamic batch) is lowered for this
  // call's sizes: shape attributes get them substituted, so every slot has a size.
  const transforms::SymbolSizes sizes = transforms::bind_symbols(g, inputs, "lower_plan");
  std::vector<std::vector<int32_t>> values(g.nodes().size());
  auto slot_of = [&](ir::ValueRef v) {
    return v.node == ir::ValueRef::kParam ? param_slot[static_cast<size_t>(v.index)]
                                          : values[static_cast<size_t>(v.node)][static_cast<size_t>(v.index)];
  };
  std::vector<TensorType> in_types;
  std::vector<char> sized;  // per step: its attributes name a bound symbol
  for (size_t k = 0; k < g.nodes().size(); ++k) {
    const ir::Node& n = *g.nodes()[k];
    if (n.op() == transforms::kConstantOp) {
      Slot s;
      s.kind = SlotKind::Constant;
      s.constant = transforms::tensor_of(*static_cast<const transforms::ConstantAttrs*>(n.attrs()));
      s.dtype = s.constant.dtype();
      s.weak = s.constant.weak();
      s.shape = s.constant.shape();
      s.strides = s.constant.strides();
      values[k] = {l.add_slot(std::move(s), kNoStep)};
      continue;
    }
    const Primitive* p = find_primitive(n.op());
    SPORE_CHECK(p != nullptr, "[lower_plan] op '", n.op(), "' is not a primitive this build knows");
    Step st;
    st.prim = p;
    bool step_sized = false;
    if (transforms::is_control_flow(*p)) {
      st.attrs = transforms::attrs_with_subgraphs(*p, n.attrs(), n.subgraphs());
    } else {
      std::shared_ptr<const void> bound = transforms::bind_attrs(*p, n.attrs(), sizes);
      step_sized = bound != nullptr;
      st.attrs = bound ? std::move(bound) : n.attrs_ptr();
    }
    in_types.clear();
    for (ir::ValueRef v : n.inputs()) {
      st.in.push_back(slot_of(v));
      in_types.push_back(l.type(st.in.back()));
    }
    std::vector<TensorType> out_types;
    if (p->eager != nullptr) {
      out_types = transforms::control_flow_types(*p, *static_cast<const transforms::ControlFlowAttrs*>(st.attrs.get()),
                                                 in_types);
    } else {
      OutTypes ot;
      p->infer(st.attrs.get(), in_types, ot);
      out_types.assign(ot.t.begin(), ot.t.begin() + ot.n);
    }
    // A node that binds sizes from values (bind_sizes, nonzero) feeds later nodes shapes known
    // only when it has run.
    SPORE_CHECK(p->value_sizes == nullptr, "[lower_plan] @", g.name(), ": ", p->name,
                " gives sizes that its input values hold when the graph runs; the plan cannot lay out what "
                "follows (the interpreter runs this graph)");
    // Checked before views too: their strides are laid out here.
    // TODO(executor): data-dependent sizes (a while loop's stacked trips) need buffers from the
    // caching allocator sized when the node has run; such graphs are interpreted for now.
    for (const TensorType& t : out_types)
      for (Dim d : t.shape)
        SPORE_CHECK(!is_symbolic(d) && d >= 0, "[lower_plan] @", g.name(), ": ", p->name, " makes a value of run-time shape ",
                    shape_str(t.shape), "; the plan cannot lay it out (the interpreter runs this graph)");
    if (p->view != nullptr) {
      if (auto view = view_geometry(*p, st.attrs.get(), l, st.in[0], out_types[0])) {
        values[k] = {l.add_slot(std::move(*view), kNoStep)};
        continue;
      }
    } else if (p->eager == nullptr) {
      st.kernel = &choose_kernel(*p, st.attrs.get(), in_types);  // prepared once layouts are known
    }
    const auto step = static_cast<int64_t>(plan->steps.size());
    for (int32_t s : st.in) {
      auto& last = l.last_read[static_cast<size_t>(l.root(s))];
      last = std::max(last, step);
    }
    for (const TensorType& t : out_types) st.out.push_back(l.add_value(t, step));
    values[k] = st.out;
    plan->steps.push_back(std::move(st));
    sized.push_back(step_sized);
  }
  std::vector<int32_t> out_slots;
  for (const ir::Output& o : g.outputs()) out_slots.push_back(slot_of(o.value));
  donate(g, l, out_slots, param_slot);
  // The memory an output shows is the caller's after the call: not the arena.
  for (int32_t s : out_slots) {
    Slot& r = plan->slots[static_cast<size_t>(l.root(s))];
    if (r.kind == SlotKind::Arena) r.kind = SlotKind::Output;
  }
  for (size_t o = 0; o < out_slots.size(); ++o) plan->outputs.push_back({out_slots[o], g.outputs()[o].updates});
  mark_invariant(g, *plan, sized);
  assign_layouts(*plan, l.producer);
  prepare_kernels(*plan);
  // One symbol (a jit function's dynamic batch): the plan may share its family's layout.
  runtime::PlanFamily* fam = nullptr;
  if (family != nullptr && sizes.size() == 1) {
    if (*family == nullptr) *family = std::make_shared<runtime::PlanFamily>();
    fam = family->get();
  }
  plan_arena(l, fam, sizes.empty() ? 0 : sizes.begin()->second);
  // The generated kernels of every fused step: one translation unit for the graph, compiled in
  // the background while the interpreter serves the first calls.
  std::vector<const void*> fused;
  for (const Step& st : plan->steps)
    if (st.prim->name == codegen::kFusedOp) fused.push_back(st.attrs.get());
  if (!fused.empty()) codegen::request_compiles(fused);
  // SPORE_DUMP_PLAN=1: every lowered plan's slots (layouts, arena offsets) and steps on stderr.
  if (const char* d = std::getenv("SPORE_DUMP_PLAN"); d && *d && *d != '0')
    std::fprintf(stderr, "%s", runtime::plan_str(*plan).c_str());
  return plan;
}

namespace {
[[maybe_unused]] const bool registered = (transforms::set_plan_lowerer(&lower_plan), true);
}  // namespace

}  // namespace spore::passes
