// SPDX-License-Identifier: Apache-2.0
// Runs a lowered Plan (runtime/plan.h): binds slots to memory once per call, then calls the
// kernels in order. Per call it allocates only the plan's outputs (from the caching allocator,
// so a steady loop reuses their blocks) and, for a strided input, its contiguous copy.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <sstream>

#include "runtime/kept_reorders.h"
#include "runtime/plan.h"
#include "runtime/profile.h"
#include "spore/ops.h"
#include "spore/threading.h"

namespace spore::runtime {

/// What one call in flight needs: its arena (the planned intermediates and kernel scratch)
/// and per-slot bindings, kept between calls so a steady call allocates nothing here.
struct Workspace {
  std::shared_ptr<Storage> arena;
  std::vector<std::byte*> ptr;   // per slot
  std::vector<Tensor> owner;     // per slot: the tensor of an Input, Output or Donated slot
  std::vector<Tensor> inputs;    // the call's inputs, strided ones made contiguous
  std::vector<Tensor> cf_in, cf_out;
  // Prepared kernels keep per-thread caches without locks (dispatch keeps them per thread), so a
  // call running beside another gets its own, prepared from the plan's types; empty: the plan's.
  std::vector<std::shared_ptr<PreparedKernel>> prepared;
  // The invariant inputs' (pointer, version) when this workspace last ran the invariant steps,
  // and the stamp their results carry (KernelContext::input_stamps); 0: never ran them.
  std::vector<std::pair<const void*, uint64_t>> invariant_seen;
  bool invariant_done = false;  // the invariant steps ran to the end for invariant_seen
  uint64_t invariant_stamp = 0;
  uint64_t invariant_key = 0;   // the Plan::invariant_key they ran under
  uint64_t plan_id = 0;         // the plan `ptr`, `owner` and `prepared` are sized for
  bool own_kernels = false;     // `prepared` holds kernels of its own (not the first workspace)
  // Own kernels prepared for other plans of the pool (other sizes of one graph), the most
  // recently run last: switching back does not prepare them again.
  std::vector<std::pair<uint64_t, std::vector<std::shared_ptr<PreparedKernel>>>> other_prepared;
};

uint64_t next_plan_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

namespace {
std::atomic<int64_t> g_invariant_runs{0};
}  // namespace
int64_t invariant_step_runs() { return g_invariant_runs.load(); }

namespace {
uint64_t invariant_key_of(const Plan& plan) { return plan.invariant_key != 0 ? plan.invariant_key : plan.id; }
}  // namespace

class ArenaPool {
 public:
  std::unique_ptr<Workspace> take(const Plan& plan) {
    std::unique_ptr<Workspace> w;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        w = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (w == nullptr) {
      w = std::make_unique<Workspace>();
      std::lock_guard<std::mutex> lock(mu_);
      w->own_kernels = made_;  // the first workspace runs the plans' own prepared kernels
      made_ = true;
    }
    if (w->plan_id != plan.id) {
      // Another plan of the pool (another size of one symbolic graph): rebind, keeping the arena.
      if (w->own_kernels) {
        auto& others = w->other_prepared;
        if (w->plan_id != 0) others.emplace_back(w->plan_id, std::move(w->prepared));
        auto it = std::find_if(others.begin(), others.end(), [&](const auto& o) { return o.first == plan.id; });
        if (it != others.end()) {
          w->prepared = std::move(it->second);
          others.erase(it);
        } else {
          prepare_again(plan, *w);
        }
        if (others.size() > kMaxOtherPlans) others.erase(others.begin());
      }
      w->plan_id = plan.id;
      w->ptr.assign(plan.slots.size(), nullptr);
      w->owner.assign(plan.slots.size(), Tensor());
    }
    const size_t bytes = plan.memory.arena_bytes;  // kernel scratch is planned inside it
    if (bytes > 0 && (!w->arena || w->arena->nbytes() < bytes)) {
      // Growing for a larger size of a symbolic graph: at least twice the old size-dependent
      // part, so sizes that keep rising (2, 3, 4 ...) move the kept results a few times, not
      // once per size.
      const size_t old = w->arena ? w->arena->nbytes() : 0;
      const size_t want = old > plan.kept_bytes && plan.kept_bytes > 0
                              ? std::max(bytes, plan.kept_bytes + 2 * (old - plan.kept_bytes))
                              : bytes;
      auto grown = std::make_shared<Storage>(kCPU, want);
      // The invariant results kept at the arena's start stay valid in the new one.
      const bool keep = w->arena && w->invariant_done && plan.kept_bytes > 0 && w->invariant_key == invariant_key_of(plan);
      if (keep) std::memcpy(grown->data(), w->arena->data(), plan.kept_bytes);
      else w->invariant_done = false;
      w->arena = std::move(grown);
    }
    return w;
  }
  void give(std::unique_ptr<Workspace> w) {
    // Hold no caller memory between calls: outputs belong to the caller, inputs too.
    for (Tensor& t : w->owner) t = Tensor();
    w->inputs.clear();
    w->cf_in.clear();
    w->cf_out.clear();
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.size() < kMaxFree) free_.push_back(std::move(w));
  }

 private:
  static void prepare_again(const Plan& plan, Workspace& w) {
    w.prepared.assign(plan.steps.size(), nullptr);
    std::vector<TensorType> in, out;
    auto type = [&](int32_t s) { return plan.slots[static_cast<size_t>(s)].type(); };
    for (size_t k = 0; k < plan.steps.size(); ++k) {
      const Step& st = plan.steps[k];
      if (!st.prepared) continue;
      in.clear();
      out.clear();
      for (int32_t s : st.in) in.push_back(type(s));
      for (int32_t s : st.out) out.push_back(type(s));
      w.prepared[k] = st.kernel->prepare(st.attrs.get(), in, out);
      SPORE_ASSERT(w.prepared[k] != nullptr && w.prepared[k]->scratch_bytes() <= st.scratch_bytes, "kernel ",
                   st.kernel->name, " of ", st.prim->name, " prepared again differently");
    }
  }

  static constexpr size_t kMaxFree = 4;  // concurrent calls beyond this get a fresh arena
  static constexpr size_t kMaxOtherPlans = 8;
  bool made_ = false;
  std::mutex mu_;
  std::vector<std::unique_ptr<Workspace>> free_;
};

namespace {

// A Tensor over slot `s`'s memory (control-flow operands and plan outputs).
Tensor tensor_at(const Plan& plan, const Workspace& w, int32_t s) {
  const Slot& slot = plan.slots[static_cast<size_t>(s)];
  const bool view = slot.kind == SlotKind::View;
  const int32_t r = view ? slot.base : s;
  const Slot& root = plan.slots[static_cast<size_t>(r)];
  const int64_t extra = view ? static_cast<int64_t>(slot.offset) : 0;
  std::shared_ptr<Storage> storage;
  int64_t offset = 0;
  switch (root.kind) {
    case SlotKind::Input:
    case SlotKind::Output:
    case SlotKind::Donated: {
      const Tensor& t = w.owner[static_cast<size_t>(r)];
      if (!view) return t;
      storage = t.storage();
      offset = t.offset();
      break;
    }
    case SlotKind::Constant:
      storage = root.constant.storage();
      offset = root.constant.offset();
      break;
    case SlotKind::Arena:
      storage = w.arena;
      offset = static_cast<int64_t>(root.offset / dtype_size(root.dtype));
      break;
    case SlotKind::View:
      SPORE_ASSERT(false, "plan slot ", s, " views slot ", r, ", itself a view");
  }
  Tensor t = Tensor::view_of(std::move(storage), slot.shape, slot.strides, offset + extra, slot.dtype);
  t.impl()->weak = slot.weak;
  return t;
}

Tensor fresh(const Slot& slot) {
  Tensor t = Tensor::empty(slot.shape, slot.dtype);
  t.impl()->weak = slot.weak;
  return t;
}

Buffer buffer_at(const Plan& plan, const Workspace& w, int32_t s) {
  const Slot& slot = plan.slots[static_cast<size_t>(s)];
  Buffer b;
  b.data = w.ptr[static_cast<size_t>(s)];
  b.dtype = slot.dtype;
  b.ndim = static_cast<int>(slot.shape.size());
  b.shape = slot.shape.data();
  b.strides = slot.strides.data();
  return b;
}

void check_inputs(const Plan& plan, std::span<const Tensor> inputs) {
  SPORE_CHECK(inputs.size() == plan.inputs.size(), "[executor] plan @", plan.name, " takes ", plan.inputs.size(),
              " inputs, got ", inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType& want = plan.inputs[i];
    SPORE_CHECK(inputs[i].defined() && inputs[i].device() == kCPU, "[executor] input ", i, " of @", plan.name,
                " is undefined or not on the CPU");
    SPORE_CHECK(inputs[i].dtype() == want.dtype && inputs[i].shape() == want.shape, "[executor] input ", i, " of @",
                plan.name, " is ", dtype_name(inputs[i].dtype()), shape_str(inputs[i].shape()), "; the plan was lowered for ",
                dtype_name(want.dtype), shape_str(want.shape), "; lower it again for this signature");
  }
}

// Input j can take its state update in place: the caller's tensor is contiguous and no other
// input shares its storage (a write would change that input too).
bool can_donate(std::span<const Tensor> inputs, size_t j) {
  if (!inputs[j].is_contiguous()) return false;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (i != j && inputs[i].storage() == inputs[j].storage()) return false;
  return true;
}

void bind_slots(const Plan& plan, Workspace& w, std::span<const Tensor> inputs) {
  w.inputs.clear();
  for (const Tensor& t : inputs) w.inputs.push_back(t.is_contiguous() ? t : t.contiguous());
  std::byte* arena = w.arena ? static_cast<std::byte*>(w.arena->data()) : nullptr;
  for (size_t s = 0; s < plan.slots.size(); ++s) {
    const Slot& slot = plan.slots[s];
    std::byte*& p = w.ptr[s];
    switch (slot.kind) {
      case SlotKind::Input:
        w.owner[s] = w.inputs[static_cast<size_t>(slot.index)];
        p = static_cast<std::byte*>(w.owner[s].data_ptr());
        break;
      case SlotKind::Constant:
        p = static_cast<std::byte*>(slot.constant.data_ptr());
        break;
      case SlotKind::Arena:
        p = arena + slot.offset;
        break;
      case SlotKind::View:
        // Bases come first: a view is made after the value it views.
        p = w.ptr[static_cast<size_t>(slot.base)] + static_cast<int64_t>(slot.offset) * static_cast<int64_t>(dtype_size(slot.dtype));
        break;
      case SlotKind::Output:
        w.owner[s] = fresh(slot);
        p = static_cast<std::byte*>(w.owner[s].data_ptr());
        break;
      case SlotKind::Donated: {
        const size_t j = static_cast<size_t>(slot.index);
        w.owner[s] = can_donate(inputs, j) ? inputs[j] : fresh(slot);
        p = static_cast<std::byte*>(w.owner[s].data_ptr());
        break;
      }
    }
  }
}

// Control-flow nodes run through their EagerFn on tensors that view the arena, with
// tls_plan_control_flow raised: their sub-graphs run as plans of their own (each with its own
// arena, taken from its pool per call); their results are fresh tensors, copied into the slots.
void run_control_flow(const Plan& plan, const Step& st, Workspace& w) {
  w.cf_in.clear();
  for (int32_t s : st.in) w.cf_in.push_back(tensor_at(plan, w, s));
  w.cf_out.assign(st.out.size(), Tensor());
  struct Raise {
    Raise() { ++tls_plan_control_flow; }
    ~Raise() { --tls_plan_control_flow; }
  } raise;
  st.prim->eager(st.attrs.get(), w.cf_in, w.cf_out);
  for (size_t k = 0; k < st.out.size(); ++k) {
    Tensor dst = tensor_at(plan, w, st.out[k]);
    if (dst.numel() > 0) ops::copy_(dst, w.cf_out[k]);
  }
}

// A view primitive whose result is not a view of its input (a reshape of strided memory
// copies): run it on tensors and copy the result into its slot.
void run_view_copy(const Plan& plan, const Step& st, Workspace& w) {
  const Slot& o = plan.slots[static_cast<size_t>(st.out[0])];
  const Tensor in = tensor_at(plan, w, st.in[0]);
  Tensor dst = tensor_at(plan, w, st.out[0]);
  if (dst.numel() == 0) return;
  if (st.prim->name == "reshape" && dst.is_contiguous()) {
    // A reshape's result is its input's elements in row-major order: one copy of the strided
    // input into the result seen with the input's shape (a contiguous view), where the view
    // function would copy it into a fresh tensor first (a heads merge in attention: 2.7 ms
    // per 8 MB, a quarter of a transformer step).
    Tensor as_in = Tensor::view_of(dst.storage(), in.shape(), contiguous_strides(in.shape()), dst.offset(), dst.dtype());
    ops::copy_(as_in, in);
    return;
  }
  ops::copy_(dst, st.prim->view(st.attrs.get(), in, TensorType{o.dtype, o.weak, o.shape}));
}

// What KernelContext::input_stamps says of slot `s`: the version of the caller's or the plan's
// storage behind a plan input, a literal or a view of them; the current stamp of an invariant
// step's result; 0 (unknown) for the rest of the plan's own memory, which every call rewrites.
uint64_t stamp_of(const Plan& plan, const Workspace& w, int32_t s) {
  const Slot* slot = &plan.slots[static_cast<size_t>(s)];
  if (slot->kind == SlotKind::View) {
    s = slot->base;
    slot = &plan.slots[static_cast<size_t>(s)];
  }
  if (slot->kind == SlotKind::Input) return w.owner[static_cast<size_t>(s)].version();
  if (slot->kind == SlotKind::Constant) return slot->constant.version();
  if (slot->invariant) return w.invariant_stamp;
  return 0;
}

// Per-input scratch of a step: inline for the usual few inputs, on the heap past that.
template <class T>
struct PerInput {
  static constexpr size_t kInline = 8;
  T inline_[kInline];
  std::vector<T> heap_;
  T* p = inline_;
  explicit PerInput(size_t n) {
    if (n > kInline) heap_.resize(n), p = heap_.data();
  }
};

void run_kernel(const Plan& plan, const Step& st, size_t k, Workspace& w) {
  PerInput<Buffer> in_buf(st.in.size());
  Buffer* ib = in_buf.p;
  for (size_t i = 0; i < st.in.size(); ++i) ib[i] = buffer_at(plan, w, st.in[i]);
  Buffer ob[kMaxOutputs];
  for (size_t i = 0; i < st.out.size(); ++i) ob[i] = buffer_at(plan, w, st.out[i]);
  const std::span<const Buffer> ins(ib, st.in.size()), outs(ob, st.out.size());
  KernelContext ctx;
  if (st.prepared) {
    PerInput<uint64_t> stamp_buf(st.in.size());
    uint64_t* stamps = stamp_buf.p;
    for (size_t i = 0; i < st.in.size(); ++i) stamps[i] = stamp_of(plan, w, st.in[i]);
    ctx.input_stamps = stamps;
    if (st.scratch_bytes > 0) {
      ctx.scratch = static_cast<std::byte*>(w.arena->data()) + st.scratch_offset;
      ctx.scratch_bytes = st.scratch_bytes;
    }
    (w.prepared.empty() ? *st.prepared : *w.prepared[k]).run(ins, outs, ctx);
  } else {
    st.kernel->run(st.attrs.get(), ins, outs, ctx);
  }
}

// True when every invariant input has the pointer and version it had when this workspace last
// ran the invariant steps to the end (their results are still in its arena). Else forgets the
// old record (a call that throws midway leaves none, so the next one reruns them) and gives the
// results a new stamp; the caller runs the steps, then record_invariant().
bool invariant_unchanged(const Plan& plan, Workspace& w) {
  if (!plan.has_invariant_steps) return false;
  bool same = w.invariant_done && w.invariant_key == invariant_key_of(plan) &&
              w.invariant_seen.size() == plan.invariant_inputs.size();
  for (size_t i = 0; same && i < plan.invariant_inputs.size(); ++i) {
    const Tensor& t = w.owner[static_cast<size_t>(plan.invariant_inputs[i])];
    same = w.invariant_seen[i].first == t.data_ptr() && w.invariant_seen[i].second == t.version();
  }
  if (same) return true;
  w.invariant_seen.clear();
  w.invariant_done = false;
  w.invariant_stamp = fresh_version_stamp();
  return false;
}

void record_invariant(const Plan& plan, Workspace& w) {
  w.invariant_done = true;
  w.invariant_key = invariant_key_of(plan);
  for (int32_t s : plan.invariant_inputs) {
    const Tensor& t = w.owner[static_cast<size_t>(s)];
    w.invariant_seen.emplace_back(t.data_ptr(), t.version());
  }
}

}  // namespace

std::shared_ptr<ArenaPool> make_arena_pool() { return std::make_shared<ArenaPool>(); }

std::vector<Tensor> run(const Plan& plan, std::span<const Tensor> inputs) {
  check_inputs(plan, inputs);
  SPORE_ASSERT(plan.pool != nullptr, "plan @", plan.name, " has no arena pool");
  // OpenMP's thread count is per calling thread; library kernels (oneDNN) read it.
  if (omp_get_max_threads() != num_threads()) omp_set_num_threads(num_threads());
  std::unique_ptr<Workspace> w = plan.pool->take(plan);
  // The plan's family shares kept weight reorders between its kernels (per-thread context).
  struct KeptScope {
    KeptReorders* outer = tls_kept_reorders;
    explicit KeptScope(KeptReorders* k) { tls_kept_reorders = k; }
    ~KeptScope() { tls_kept_reorders = outer; }
  } kept_scope{plan.kept_reorders.get()};
  struct Return {
    ArenaPool& pool;
    std::unique_ptr<Workspace>& w;
    ~Return() { pool.give(std::move(w)); }
  } give_back{*plan.pool, w};
  bind_slots(plan, *w, inputs);
  const bool skip_invariant = invariant_unchanged(plan, *w);
  const bool profiled = profile::plan_enabled();
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const Step& st = plan.steps[k];
    if (st.invariant && skip_invariant) continue;
    if (st.invariant) g_invariant_runs.fetch_add(1, std::memory_order_relaxed);
    if (profiled) profile::note_variant(nullptr);
    const int64_t t0 = profiled ? profile::now_ns() : 0;
    if (st.prim->eager != nullptr) run_control_flow(plan, st, *w);
    else if (st.prim->view != nullptr) run_view_copy(plan, st, *w);
    else run_kernel(plan, st, k, *w);
    if (profiled) profile::record_step(plan, k, profile::now_ns() - t0);
  }
  if (!skip_invariant && plan.has_invariant_steps) record_invariant(plan, *w);
  // A state update written into the caller's tensor is an in-place write: kernels that keep
  // work made from it (input_stamps) must see it changed.
  for (const PlanOutput& o : plan.outputs) {
    const Slot& s = plan.slots[static_cast<size_t>(o.slot)];
    const Tensor& t = w->owner[static_cast<size_t>(o.slot)];
    if (s.kind == SlotKind::Donated && t.defined() && t.storage() == inputs[static_cast<size_t>(s.index)].storage())
      t.storage()->bump_version();
  }
  std::vector<Tensor> out;
  out.reserve(plan.outputs.size());
  for (const PlanOutput& o : plan.outputs) {
    Tensor t = tensor_at(plan, *w, o.slot);
    const Slot& s = plan.slots[static_cast<size_t>(o.slot)];
    const Slot& root = s.kind == SlotKind::View ? plan.slots[static_cast<size_t>(s.base)] : s;
    // The plan's literals are its own: the caller gets a copy it may write to.
    out.push_back(root.kind == SlotKind::Constant ? t.clone() : std::move(t));
  }
  return out;
}

std::string plan_str(const Plan& plan) {
  static const char* kinds[] = {"input", "constant", "arena", "view", "output", "donated"};
  std::ostringstream os;
  os << "plan @" << plan.name << ": " << plan.steps.size() << " steps, arena " << plan.memory.arena_bytes
     << " bytes (intermediates " << plan.memory.intermediate_bytes << "), scratch " << plan.memory.scratch_bytes << "\n";
  for (size_t s = 0; s < plan.slots.size(); ++s) {
    const Slot& sl = plan.slots[s];
    os << "  $" << s << " " << kinds[static_cast<int>(sl.kind)] << " " << dtype_name(sl.dtype) << shape_str(sl.shape);
    if (sl.channels_last) os << " channels_last";
    if (sl.kind == SlotKind::Arena) os << " @" << sl.offset;
    if (sl.kind == SlotKind::View) os << " of $" << sl.base << "+" << sl.offset;
    if (sl.kind == SlotKind::Input || sl.kind == SlotKind::Donated) os << " input " << sl.index;
    os << "\n";
  }
  for (const Step& st : plan.steps) {
    os << "  " << st.prim->name << "(";
    for (size_t i = 0; i < st.in.size(); ++i) os << (i ? ", $" : "$") << st.in[i];
    os << ") -> ";
    for (size_t i = 0; i < st.out.size(); ++i) os << (i ? ", $" : "$") << st.out[i];
    os << "\n";
  }
  return os.str();
}

}  // namespace spore::runtime
