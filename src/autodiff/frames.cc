// SPDX-License-Identifier: Apache-2.0
#include "autodiff/frames.h"

#include <atomic>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "autodiff/rules.h"
#include "runtime/trace_hooks.h"
#include "spore/error.h"
#include "spore/ops.h"

namespace spore::autodiff {
namespace {

struct Stack {
  std::vector<Frame*> frames;
  int active = 0;
};
thread_local Stack tls_stack;

std::atomic<uint64_t> g_next_uid{1};
// Open frames by uid, with the thread that opened them: a tensor tracked by a frame of another
// thread is an error, not a silently untracked value.
std::mutex g_open_mu;
std::unordered_map<uint64_t, std::thread::id> g_open;

void check_foreign(const Primitive& p, const Tensor& t) {
  const TraceSlot* slot = t.impl()->trace.get();
  if (slot == nullptr) return;
  const auto me = std::this_thread::get_id();
  std::lock_guard<std::mutex> lock(g_open_mu);
  for (const auto& e : slot->entries) {
    auto it = g_open.find(e.uid);
    if (it != g_open.end() && it->second != me)
      throw Error(detail::cat("[", p.name, "] an input belongs to a grad, jvp, jit or vmap trace that is open in another "
                              "thread; transforms are per thread, so compute with it in the thread that opened the "
                              "transform (or pass the value out of the transform first)"));
  }
}

void foreign_hook(const Primitive& p, const Tensor& t) { check_foreign(p, t); }

// A record hook installed before ours (a test's call counter) keeps being called.
decltype(runtime::TraceHooks::record) g_prev_record = nullptr;

// Dispatch calls the hooks while its counter is non-zero; frames change it by deltas so that
// other users of the hook (tests) keep their own share.
void set_active(int active) {
  runtime::tls_open_traces += active - tls_stack.active;
  tls_stack.active = active;
}

// The record hook: after an eager op, every active frame that tracks an input records it.
// Outer frames go first so an inner frame's rule ops (emitted with only outer frames active)
// never run before the outer frames have seen the op itself.
void record_hook(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const Tensor> out) {
  if (g_prev_record) g_prev_record(p, attrs, in, out);
  Stack& s = tls_stack;
  // Only a tensor none of this thread's frames tracks can belong to another thread's frame:
  // the common case never takes the registry's lock.
  for (const Tensor& t : in) {
    if (!t.impl()->trace) continue;
    bool ours = false;
    for (int d = 0; d < s.active && !ours; ++d) ours = find_entry(t, s.frames[d]->uid()) != nullptr;
    if (!ours) check_foreign(p, t);
  }
  const int active = s.active;
  for (int d = 0; d < active; ++d) {
    Frame* f = s.frames[d];
    if (f->kind() == Frame::Kind::Symbolic) continue;  // symbolic traces see ops via the symbolic hook
    bool tracked = false;
    for (const Tensor& t : in)
      if (find_entry(t, f->uid())) {
        tracked = true;
        break;
      }
    if (tracked) f->record(d, p, attrs, in, out);
  }
}

bool symbolic_hook(const Primitive& p, const void* attrs, std::span<const Tensor> in, const OutTypes& types,
                   runtime::Outputs& out) {
  out.n = types.n;
  return trace_symbolic(p, attrs, in, std::span<const TensorType>(types.t.data(), static_cast<size_t>(types.n)),
                        std::span<Tensor>(out.t.data(), static_cast<size_t>(types.n)));
}

bool write_hook(const Tensor& dst, const Tensor& value, const char* op, bool untracked_ok) {
  Stack& s = tls_stack;
  int sd = s.active - 1;
  while (sd >= 0 && s.frames[sd]->kind() != Frame::Kind::Symbolic) --sd;
  if (sd < 0) return false;
  for (int d = sd + 1; d < s.active; ++d) {
    const uint64_t uid = s.frames[d]->uid();
    // A statistics write (untracked_ok) is never differentiated, as in PyNative, where it goes
    // straight to memory whatever tracks the tensors.
    SPORE_CHECK(untracked_ok || find_entry(dst, uid) == nullptr, "[", op,
                "] the destination is tracked by an open transform (grad, jvp): updating it in place would lose its "
                "history; use the out-of-place op and keep the result");
    SPORE_CHECK(untracked_ok || find_entry(value, uid) == nullptr, "[", op,
                "] the value written is tracked by an open transform (grad, jvp); in-place writes are not "
                "differentiated, so its gradient would be lost: use the out-of-place result instead");
  }
  // The new value in dst's dtype and shape, recorded by the trace like any op.
  const Tensor v = ops::broadcast_to(value.dtype() == dst.dtype() ? value : value.to(dst.dtype()), dst.shape());
  s.frames[sd]->write(dst, v, op);
  return true;
}

}  // namespace

void record_eager(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const Tensor> out) {
  record_hook(p, attrs, in, out);
}

Frame::Frame(Kind kind) : kind_(kind), uid_(g_next_uid.fetch_add(1, std::memory_order_relaxed)) {}

void push_frame(Frame* f) {
  install();
  Stack& s = tls_stack;
  {
    std::lock_guard<std::mutex> lock(g_open_mu);
    g_open[f->uid()] = std::this_thread::get_id();
  }
  s.frames.push_back(f);
  set_active(static_cast<int>(s.frames.size()));
}

void pop_frame(Frame* f) {
  Stack& s = tls_stack;
  SPORE_ASSERT(!s.frames.empty() && s.frames.back() == f, "transform frames closed out of order");
  {
    std::lock_guard<std::mutex> lock(g_open_mu);
    g_open.erase(f->uid());
  }
  s.frames.pop_back();
  set_active(std::min(s.active, static_cast<int>(s.frames.size())));
}

// Suspended frames leave the stack until the rule is done, so a rule may itself open transforms
// (control-flow rules trace sub-graphs and differentiate them) on top of the outer frames.
SuspendAbove::SuspendAbove(int depth) {
  Stack& s = tls_stack;
  depth = std::min(depth, static_cast<int>(s.frames.size()));
  saved_.assign(s.frames.begin() + depth, s.frames.end());
  s.frames.resize(static_cast<size_t>(depth));
  set_active(depth);
}
SuspendAbove::~SuspendAbove() {
  Stack& s = tls_stack;
  s.frames.insert(s.frames.end(), saved_.begin(), saved_.end());
  set_active(static_cast<int>(s.frames.size()));
}

Frame* innermost(Frame::Kind kind) {
  Stack& s = tls_stack;
  for (int d = s.active - 1; d >= 0; --d)
    if (s.frames[d]->kind() == kind) return s.frames[d];
  return nullptr;
}

std::span<Frame* const> active_frames() { return {tls_stack.frames.data(), static_cast<size_t>(tls_stack.active)}; }

const TraceSlot::Entry* find_entry(const Tensor& t, uint64_t uid) {
  const TraceSlot* slot = t.impl()->trace.get();
  if (slot == nullptr) return nullptr;
  for (const auto& e : slot->entries)
    if (e.uid == uid) return &e;
  return nullptr;
}

void add_entry(const Tensor& t, TraceSlot::Entry e) {
  auto& slot = t.impl()->trace;
  if (!slot) slot = std::make_shared<TraceSlot>();
  for (auto& old : slot->entries)
    if (old.uid == e.uid) {
      old = std::move(e);
      return;
    }
  slot->entries.push_back(std::move(e));
}

void remove_entry(const Tensor& t, uint64_t uid) {
  auto& slot = t.impl()->trace;
  if (!slot) return;
  auto& e = slot->entries;
  for (size_t i = 0; i < e.size(); ++i)
    if (e[i].uid == uid) {
      e.erase(e.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  if (e.empty()) slot = nullptr;
}

Tensor fresh_alias(const Tensor& t) {
  auto impl = std::make_shared<TensorImpl>(*t.impl());
  impl->trace = nullptr;
  return Tensor(std::move(impl));
}

Tensor without_entry(const Tensor& t, uint64_t uid) {
  if (!find_entry(t, uid)) return t;
  auto impl = std::make_shared<TensorImpl>(*t.impl());
  auto slot = std::make_shared<TraceSlot>();
  for (const auto& e : t.impl()->trace->entries)
    if (e.uid != uid) slot->entries.push_back(e);
  impl->trace = slot->entries.empty() ? nullptr : std::move(slot);
  return Tensor(std::move(impl));
}

// Under a symbolic trace nothing runs; the innermost symbolic frame builds the outputs, then the
// frames opened inside it (a grad inside jit) record the op as usual. Frames outside it never
// see symbolic tensors: they record what the trace's transform emits.
bool trace_symbolic(const Primitive& p, const void* attrs, std::span<const Tensor> in,
                    std::span<const TensorType> types, std::span<Tensor> out) {
  Stack& s = tls_stack;
  int sd = s.active - 1;
  while (sd >= 0 && s.frames[sd]->kind() != Frame::Kind::Symbolic) --sd;
  if (sd < 0) return false;
  s.frames[sd]->build(p, attrs, in, types, out);
  for (int d = sd + 1; d < s.active; ++d) {
    Frame* f = s.frames[d];
    for (const Tensor& t : in)
      if (find_entry(t, f->uid())) {
        f->record(d, p, attrs, in, out);
        break;
      }
  }
  return true;
}

void install() {
  static std::once_flag once;
  std::call_once(once, [] {
    install_rules();
    runtime::TraceHooks h = runtime::trace_hooks();
    g_prev_record = h.record;
    h.record = record_hook;
    h.symbolic = symbolic_hook;
    h.foreign = foreign_hook;
    h.write = write_hook;
    runtime::set_trace_hooks(h);
  });
}

}  // namespace spore::autodiff
