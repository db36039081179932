// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <memory>
#include <vector>

#include "autodiff/frames.h"
#include "ir/printer.h"
#include "prims/random_key.h"
#include "runtime/dispatch.h"
#include "runtime/trace_hooks.h"
#include "spore/guard.h"
#include "spore/jit.h"
#include "spore/ops.h"
#include "spore/threading.h"
#include "transforms/graph_optimizer.h"
#include "transforms/interpreter.h"
#include "transforms/jit_dynamic.h"
#include "transforms/jit_stats.h"
#include "transforms/plan_lowerer.h"
#include "transforms/trace.h"

namespace spore {
namespace {
std::atomic<Mode> g_mode{Mode::PyNative};
std::atomic<int64_t> g_traces{0};
}  // namespace

void set_context(Mode mode) { g_mode.store(mode); }
Mode get_mode() { return g_mode.load(); }

namespace transforms {

namespace {
std::atomic<GraphOptimizer> g_optimizer{nullptr};
}  // namespace
void set_graph_optimizer(GraphOptimizer f) { g_optimizer.store(f); }
GraphOptimizer graph_optimizer() { return g_optimizer.load(); }

namespace {
std::atomic<PlanLowerer> g_lowerer{nullptr};
}  // namespace
void set_plan_lowerer(PlanLowerer f) { g_lowerer.store(f); }
PlanLowerer plan_lowerer() { return g_lowerer.load(); }

namespace {
std::atomic<int64_t> g_plan_runs{0}, g_interpreted_runs{0};
std::mutex g_reason_mu;
std::string g_last_reason;

void count_run(bool plan, const std::string& reason) {
  if (plan) {
    g_plan_runs.fetch_add(1);
    return;
  }
  g_interpreted_runs.fetch_add(1);
  std::lock_guard<std::mutex> lock(g_reason_mu);
  g_last_reason = reason;
}
}  // namespace

JitRunStats jit_run_stats() { return {g_plan_runs.load(), g_interpreted_runs.load()}; }
std::string last_interpreted_reason() {
  std::lock_guard<std::mutex> lock(g_reason_mu);
  return g_last_reason;
}

bool compiles_here() { return g_mode.load() == Mode::Graph && autodiff::active_frames().empty(); }
int64_t total_traces() { return g_traces.load(); }
bool tracing() { return runtime::tls_open_traces != 0; }

namespace {

bool log_jit() {
  static const bool on = [] {
    const char* v = std::getenv("SPORE_LOG");
    return v && std::string(v).find("jit") != std::string::npos;
  }();
  return on;
}

// The signature of a call: the tree structures with leaf dtypes and shapes, and static leaves.
std::string signature(const std::vector<TensorTree>& args) {
  std::ostringstream os;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) os << ", ";
    os << args[i].structure_str(true);
    for (const Tensor& t : args[i].leaves()) os << ':' << dtype_name(t.dtype()) << (t.weak() ? "w" : "");
  }
  return os.str();
}

// The signature with sizes left out (ranks kept): calls that differ only in sizes share it.
std::string shape_class(const std::vector<TensorTree>& args) {
  std::ostringstream os;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) os << ", ";
    os << args[i].structure_str(false);
    for (const Tensor& t : args[i].leaves()) os << ':' << dtype_name(t.dtype()) << (t.weak() ? "w" : "") << '/' << t.dim();
  }
  return os.str();
}

// Dynamic dimensions (jit_dynamic.h) unless SPORE_JIT_DYNAMIC=0 (read on each trace, which is
// rare: a benchmark compares both in one process).
bool dynamic_enabled() {
  const char* v = std::getenv("SPORE_JIT_DYNAMIC");
  return !(v && std::string(v) == "0");
}

// How a call of a graph uses and moves the CPU generator (see SymbolicTrace::functionalize_random).
struct RandomUse {
  int key_capture = -1;  // position in `captured` of the [seed, base offset] input; -1: none
  uint64_t advance = 0;  // a call advances the generator's offset by this much (a static amount)
  bool fixed = false;    // the function reseeds it: a call leaves it in the state `end`
  RandomKey end;
};

struct Traced {
  ir::GraphPtr graph;
  ir::GraphPtr raw;  // as traced, before the passes (what dynamic dimensions are found from)
  std::vector<Tensor> captured;
  TensorTree out_structure;
  RandomUse random;
  // Per call signature (one, unless a graph over a symbolic dimension serves several), lowered
  // on its first call; guarded by Impl::mu.
  struct SignaturePlan {
    std::shared_ptr<const runtime::Plan> plan;
    std::string failure;  // why the lowering failed (the interpreter runs it), or ""
    uint64_t used = 0;    // when it last ran: the least recently run goes first
  };
  mutable std::map<std::string, SignaturePlan> plans;
  // Dynamic: the plans' shared memory layout and arena (passes/plan_family.h), made by the
  // lowering; guarded by Impl::mu.
  mutable std::shared_ptr<runtime::PlanFamily> family;
  mutable bool family_joined = false;  // a plan joined it: the ones lowered before were dropped
  // A graph over a symbolic dimension: it serves several signatures, a plan lowered for each.
  bool dynamic = false;
  ir::GraphPtr first_raw;  // dynamic: the earlier of the two traces it was generalized from
  std::string symbol;      // dynamic: the symbolic dimension's name
  std::string raw_text;    // dynamic: `raw` printed, what each guard trace is compared with
  std::string signature;   // dynamic: the parameters' types, the symbol by name (SPORE_LOG=jit)
  bool draws_random() const { return random.key_capture >= 0 || random.advance > 0 || random.fixed; }
  // Flags the function read while tracing (a Cell's training mode) and the values it saw: the
  // graph serves a call only while all still hold.
  std::vector<std::pair<std::weak_ptr<const std::atomic<bool>>, bool>> guards;
  bool guards_hold() const {
    for (const auto& [flag, value] : guards) {
      auto f = flag.lock();
      if (!f || f->load(std::memory_order_relaxed) != value) return false;
    }
    return true;
  }
};

// The guard list of the trace being built on this thread (null when none).
thread_local std::vector<std::pair<std::weak_ptr<const std::atomic<bool>>, bool>>* tls_guards = nullptr;

// Plans kept per graph over a symbolic dimension (each holds its own arena).
constexpr size_t kMaxPlansPerGraph = 16;

std::atomic<int> g_dynamic_symbols{0};

// Whether trace `t` captures what `prev` captures (the same memory), reads the same flags with
// the same values, and neither draws random numbers (a draw's offsets may depend on sizes):
// what must hold, besides the graphs, for one graph to stand for both.
bool same_context(const Traced& prev, const Traced& t) {
  if (prev.draws_random() || t.draws_random() || prev.captured.size() != t.captured.size() ||
      prev.guards.size() != t.guards.size() || !prev.out_structure.same_structure(t.out_structure))
    return false;
  for (size_t i = 0; i < t.captured.size(); ++i) {
    const Tensor &x = prev.captured[i], &y = t.captured[i];
    // The same memory (a parameter read through a fresh view object is the same tensor).
    if (x.is_same(y) || (x.storage() == y.storage() && x.offset() == y.offset() && x.dtype() == y.dtype() &&
                         x.shape() == y.shape() && x.strides() == y.strides()))
      continue;
    // Anything else (equal values now) is refused: a trace cannot tell a tensor it made (a
    // small table) from one that lives on and may change later (two LayerNorm gains that are
    // both ones today), and binding the wrong one would give wrong results after it changes.
    return false;
  }
  for (size_t i = 0; i < t.guards.size(); ++i)
    if (prev.guards[i].first.lock() != t.guards[i].first.lock() || prev.guards[i].second != t.guards[i].second)
      return false;
  return true;
}

// `t` and `prev` (the same function traced at another size) as one graph over a new symbolic
// dimension, optimized; null when they are not the same graph but for sizes, their contexts
// differ (same_context), or the passes refuse the symbolic graph.
std::shared_ptr<Traced> generalize(const Traced& prev, const Traced& t) {
  if (!same_context(prev, t)) return nullptr;
  const std::string name = "dyn" + std::to_string(g_dynamic_symbols.fetch_add(1));
  ir::GraphPtr g = generalize_traces(*prev.raw, *t.raw, name);
  if (g == nullptr) return nullptr;
  auto out = std::make_shared<Traced>();
  out->raw = g;
  try {
    out->graph = graph_optimizer() ? graph_optimizer()(g) : g;
  } catch (const Error& e) {
    if (log_jit()) std::fprintf(stderr, "[jit] the passes refused a graph over a symbolic dimension, tracing per size: %s\n", e.what());
    return nullptr;
  }
  out->captured = t.captured;
  out->out_structure = t.out_structure;
  out->random = t.random;
  out->guards = t.guards;
  out->dynamic = true;
  out->first_raw = prev.raw;
  out->symbol = name;
  out->raw_text = ir::print_graph(*g);
  for (size_t i = 0; i < g->params().size(); ++i) out->signature += (i ? ", " : "") + ir::type_str(g->params()[i].type);
  return out;
}

// The guard on a graph over a symbolic dimension at a size it has not served yet: `t`, the
// function traced at that size, is `general` at that size exactly. The function's C++ may read
// a size where no graph sees it (a branch, a min, a size folded into a literal), so two traces
// that agree do not prove a third agrees; this trace does, and costs no passes, no lowering of a
// graph of its own and no kernel compile. Generalizing the first trace with `t` under the same
// symbol gives the same text iff every node, attribute and size of `t` is `general`'s with the
// symbol bound to t's size (the k * n + c each size is read as is fixed by two points).
bool serves(const Traced& general, const Traced& t) {
  if (!same_context(general, t)) return false;
  ir::GraphPtr g = generalize_traces(*general.first_raw, *t.raw, general.symbol);
  return g != nullptr && ir::print_graph(*g) == general.raw_text;
}

// Graphs kept per signature: one per combination of guarded flags seen, the oldest dropped first.
constexpr size_t kMaxGraphsPerSignature = 8;

// Graphs run as compiled plans unless SPORE_EXECUTOR=interpreter or SPORE_OPT_LEVEL=0 asks for
// the interpreter (both paths stay testable; the interpreter is the reference). Returns why
// plans are off, or "" when they are on.
std::string plans_disabled_reason() {
  const char* e = std::getenv("SPORE_EXECUTOR");
  if (e && std::string(e) == "interpreter") return "SPORE_EXECUTOR=interpreter";
  const char* o = std::getenv("SPORE_OPT_LEVEL");
  if (o && std::string(o) == "0") return "SPORE_OPT_LEVEL=0";
  return plan_lowerer() != nullptr ? "" : "no plan lowering is linked in";
}

}  // namespace

struct JitCore::Impl {
  std::string name;
  std::mutex mu;
  std::map<std::string, std::vector<std::shared_ptr<const Traced>>> cache;
  // Per shape class: the graphs over a symbolic dimension, and the last graph traced per size.
  std::map<std::string, std::vector<std::shared_ptr<const Traced>>> dynamic;
  std::map<std::string, std::shared_ptr<const Traced>> last_of_class;
  std::string last_key;
  std::shared_ptr<const Traced> last_used;
  int traces = 0;
  int optimizations = 0;
};

JitCore::JitCore(std::string name) : impl_(std::make_unique<Impl>()) { impl_->name = std::move(name); }
JitCore::~JitCore() = default;

int JitCore::traces() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->traces;
}

int JitCore::optimizations() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->optimizations;
}

std::string JitCore::last_graph_text() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->last_used ? ir::print_graph(*impl_->last_used->graph) : std::string();
}

void record_guard(const std::shared_ptr<const std::atomic<bool>>& flag, bool value) {
  if (tls_guards == nullptr) return;
  for (const auto& [f, v] : *tls_guards)
    if (f.lock() == flag) return;
  tls_guards->emplace_back(flag, value);
}

TensorTree JitCore::call(const autodiff::TreeFn& f, const std::vector<TensorTree>& args) {
  // Inside a transform, jit passes through: the transform sees the primitives themselves.
  if (!autodiff::active_frames().empty()) return f(args);
  const std::string key = signature(args);
  std::shared_ptr<const Traced> traced;  // kept alive for this call
  std::optional<RandomKey> call_key;     // the generator state this call draws from
  bool signature_seen = false;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->cache.find(key);
    if (it != impl_->cache.end()) {
      signature_seen = true;
      for (const auto& t : it->second)
        if (t->guards_hold()) traced = t;
    }
  }
  if (traced == nullptr) {
    if (log_jit()) {
      std::string previous;
      {
        std::lock_guard<std::mutex> lock(impl_->mu);
        previous = impl_->last_key;
      }
      if (signature_seen)
        std::fprintf(stderr, "[jit] tracing %s for (%s): a flag its graphs depend on (a Cell's train/eval mode) has "
                     "another value\n", impl_->name.c_str(), key.c_str());
      else
        std::fprintf(stderr, "[jit] tracing %s for (%s)%s%s\n", impl_->name.c_str(), key.c_str(),
                     previous.empty() ? ": first call" : "; previous signature was (",
                     previous.empty() ? "" : (previous + ")").c_str());
    }
    SymbolicTrace trace(impl_->name);
    trace.allow_state();
    // The generator state becomes a graph input: the trace logs the keys the function draws.
    prims::DrawLog draws;
    trace.functionalize_random(&draws);
    std::vector<TensorTree> sargs;
    TensorTree out;
    Traced t;
    {
      // Guards recorded by this trace (a nested trace on this thread restores the outer list).
      auto* outer_guards = tls_guards;
      tls_guards = &t.guards;
      struct Restore {
        decltype(tls_guards) outer;
        ~Restore() { tls_guards = outer; }
      } restore{outer_guards};
      autodiff::FrameGuard open(&trace);
      for (const TensorTree& a : args) {
        auto leaves = a.leaves();
        for (auto& l : leaves) l = trace.input(runtime::type_of(l));
        sargs.push_back(a.with_leaves(leaves));
      }
      out = f(sargs);
    }
    auto out_leaves = out.leaves();
    t.raw = trace.finish(out_leaves);
    t.captured = trace.captured();
    t.out_structure = out;
    // Tracing drew from the generator exactly as PyNative would on this call (and left it where
    // PyNative would), so this call runs with the state the function saw; later calls take
    // theirs from the generator and advance it by the same static amount.
    t.random.key_capture = trace.random_key_capture();
    t.random.advance = draws.advance();
    t.random.fixed = draws.state_is_fixed();
    if (t.random.fixed) t.random.end = {default_generator(kCPU).seed(), default_generator(kCPU).offset()};
    call_key = RandomKey{draws.seed(), draws.base()};
    if (log_jit() && trace.has_random())
      std::fprintf(stderr, "[jit] %s draws random numbers: the generator state is a graph input, a call advances it by %llu%s\n",
                   impl_->name.c_str(), static_cast<unsigned long long>(t.random.advance),
                   t.random.fixed ? " (it reseeds the generator: its draws after manual_seed are constants)" : "");
    // A graph over a symbolic dimension of this shape class that this trace proves serves this
    // size (`serves`), else the function traced before at another size, generalized with this
    // trace into one graph over a symbolic dimension, else this trace optimized on its own.
    const bool dynamic = dynamic_enabled();
    const std::string cls = dynamic ? shape_class(args) : std::string();
    std::vector<std::shared_ptr<const Traced>> candidates;
    std::shared_ptr<const Traced> prev;
    if (dynamic) {
      std::lock_guard<std::mutex> lock(impl_->mu);
      if (auto it = impl_->dynamic.find(cls); it != impl_->dynamic.end()) candidates = it->second;
      if (auto it = impl_->last_of_class.find(cls); it != impl_->last_of_class.end()) prev = it->second;
    }
    std::shared_ptr<const Traced> general;
    for (auto it = candidates.rbegin(); it != candidates.rend() && general == nullptr; ++it)
      if ((*it)->guards_hold() && serves(**it, t)) general = *it;
    bool optimized = false;
    if (general == nullptr && prev != nullptr) {
      general = generalize(*prev, t);
      optimized = general != nullptr;
      if (general && log_jit())
        std::fprintf(stderr, "[jit] %s: its traces at two sizes are one graph but for sizes (inputs %s): each later "
                     "size is traced once to check it is that graph at that size, then runs it without passes\n",
                     impl_->name.c_str(), general->signature.c_str());
    } else if (general && log_jit()) {
      std::fprintf(stderr, "[jit] %s: the trace for (%s) is its graph over a symbolic dimension at these sizes: "
                   "no passes, a plan lowered for them\n", impl_->name.c_str(), key.c_str());
    }
    if (general == nullptr) {
      t.graph = t.raw;
      if (GraphOptimizer opt = graph_optimizer()) t.graph = opt(t.graph);  // the pass pipeline
      optimized = true;
    }
    std::lock_guard<std::mutex> lock(impl_->mu);
    ++impl_->traces;
    if (optimized) ++impl_->optimizations;
    g_traces.fetch_add(1);
    auto& graphs = impl_->cache[key];
    if (graphs.size() >= kMaxGraphsPerSignature) graphs.erase(graphs.begin());
    if (general) {
      if (candidates.empty() || std::find(candidates.begin(), candidates.end(), general) == candidates.end()) {
        // Bounded like the per-signature lists: each new size tries every graph of its class.
        auto& gs = impl_->dynamic[cls];
        if (gs.size() >= kMaxGraphsPerSignature) gs.erase(gs.begin());
        gs.push_back(general);
      }
      traced = general;  // the signature is served by it from now on, without tracing
    } else {
      traced = std::make_shared<const Traced>(std::move(t));
      if (dynamic) impl_->last_of_class[cls] = traced;
    }
    graphs.push_back(traced);
  }
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->last_key = key;
    impl_->last_used = traced;
  }
  std::vector<Tensor> inputs;
  for (const TensorTree& a : args)
    for (const Tensor& l : a.leaves()) inputs.push_back(l);
  const size_t n_args = inputs.size();
  for (const Tensor& c : traced->captured) inputs.push_back(c);
  // The generator: read (and move) its state as one PyNative run of the function would.
  const RandomUse& ru = traced->random;
  if (!call_key) {
    Generator& gen = default_generator(kCPU);
    if (ru.fixed) {
      call_key = RandomKey{gen.seed(), gen.offset()};
      gen.set_state(ru.end.seed, ru.end.offset);
    } else if (ru.advance > 0 || ru.key_capture >= 0) {
      call_key = gen.next(static_cast<int64_t>(ru.advance));  // a multiple of 4: advances by exactly that
    }
  }
  if (ru.key_capture >= 0)
    inputs[n_args + static_cast<size_t>(ru.key_capture)] = ops::from_vector(
        std::vector<int64_t>{static_cast<int64_t>(call_key->seed), static_cast<int64_t>(call_key->offset)}, {2});
  std::shared_ptr<const runtime::Plan> plan;
  std::string why_interpreted = plans_disabled_reason();
  if (why_interpreted.empty()) {
    bool cpu = true;
    for (const Tensor& t : inputs) cpu = cpu && t.device() == kCPU;
    std::lock_guard<std::mutex> lock(impl_->mu);
    const Traced& t = *traced;
    // Prepared library kernels fix their thread count: a changed count lowers again. A failed
    // lowering is remembered per signature (one size of a symbolic graph failing does not make
    // every size interpret); a symbolic graph keeps the kMaxPlansPerGraph most recently run.
    static std::atomic<uint64_t> tick{0};
    auto& sp = t.plans[key];
    sp.used = ++tick;
    if (cpu && sp.failure.empty() && (sp.plan == nullptr || sp.plan->threads != num_threads())) {
      try {
        sp.plan = plan_lowerer()(*t.graph, inputs, t.dynamic ? &t.family : nullptr);
        if (log_jit() && t.dynamic)
          std::fprintf(stderr, "[jit] %s: the plan for (%s) %s (arena %zu bytes)\n", impl_->name.c_str(), key.c_str(),
                       sp.plan->invariant_key != 0 ? "shares one memory layout and arena with its other sizes"
                                                   : "has a memory layout of its own",
                       sp.plan->memory.arena_bytes);
        // The first plan to join the family's layout (the second size lowered) leaves the ones
        // lowered before it on layouts of their own: those sizes lower again on their next call
        // and join, so every size runs in the one arena (once: a size that cannot join keeps
        // its plan).
        if (sp.plan->invariant_key != 0 && !t.family_joined) {
          t.family_joined = true;
          for (auto it = t.plans.begin(); it != t.plans.end();) {
            if (it->second.plan && it->second.plan->invariant_key != sp.plan->invariant_key) it = t.plans.erase(it);
            else ++it;
          }
        }
      } catch (const Error& e) {
        if (log_jit()) std::fprintf(stderr, "[jit] %s: lowering failed, interpreting: %s\n", impl_->name.c_str(), e.what());
        sp.failure = e.what();
      }
    }
    if (cpu) plan = sp.plan;
    if (!cpu) why_interpreted = "an input is not on the CPU";
    else if (!sp.failure.empty()) why_interpreted = "lowering failed: " + sp.failure;
    if (t.plans.size() > kMaxPlansPerGraph) {
      auto oldest = t.plans.end();
      for (auto it = t.plans.begin(); it != t.plans.end(); ++it)
        if (it->first != key && (oldest == t.plans.end() || it->second.used < oldest->second.used)) oldest = it;
      t.plans.erase(oldest);
    }
  }
  count_run(plan != nullptr, why_interpreted);
  auto outs = plan ? runtime::run(*plan, inputs) : interpret(*traced->graph, inputs);
  const auto& gouts = traced->graph->outputs();
  // A donated state output is the input itself, already written in place.
  auto donated = [&](size_t j) {
    return gouts[j].updates && outs[j].is_same(inputs[static_cast<size_t>(*gouts[j].updates)]);
  };
  // A jit result is a tensor of its own. The passes may reduce an output to an input (x * 1 -> x)
  // or make two outputs one (CSE); returned as they are, those would alias the caller's tensors
  // or each other, and a state write-back below would then change a result, or an update read
  // an input that an earlier write-back already overwrote (a swap). So every output sharing
  // memory with an input or an earlier output is copied first, then the state is written back.
  auto shares = [](const Tensor& a, const Tensor& b) { return a.storage() == b.storage(); };
  for (size_t j = 0; j < outs.size(); ++j) {
    if (donated(j)) continue;
    bool alias = false;
    for (const Tensor& in : inputs) alias = alias || shares(outs[j], in);
    for (size_t k = 0; k < j && !alias; ++k) alias = shares(outs[j], outs[k]);
    if (alias) outs[j] = outs[j].clone();
  }
  // State written by the function (outputs marked "updates input j", after the results) goes
  // back into the caller's tensors, as the eager run would have left them.
  size_t n_results = gouts.size();
  for (size_t j = 0; j < gouts.size(); ++j)
    if (gouts[j].updates) {
      n_results = std::min(n_results, j);
      if (!donated(j)) ops::copy_(inputs[static_cast<size_t>(*gouts[j].updates)], outs[j]);
    }
  outs.resize(n_results);
  return traced->out_structure.with_leaves(outs);
}

}  // namespace transforms
}  // namespace spore
