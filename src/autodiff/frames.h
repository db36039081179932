// SPDX-License-Identifier: Apache-2.0
#pragma once
// The open traces and tapes of one thread (shared/ARCHITECTURE.md, "One path for both modes").
// Each transform call opens a Frame: a reverse-mode tape (grad, vjp), a forward-mode frame (jvp)
// or a symbolic trace (jit, vmap). A tensor belongs to a frame when its TraceSlot holds an entry
// with that frame's uid; dispatch hands every op to the frames that track one of its inputs.
//
// Nesting: frames form a stack, innermost last. When a frame emits ops of its own (a jvp rule
// computing tangents, a tape running backward), only the frames outside it are active, so outer
// frames record what an inner one emits and an inner frame never sees its own rule's ops — the
// rule that makes grad of grad, jvp of grad and nested closures (perturbation confusion) right.
#include <cstdint>
#include <span>
#include <vector>

#include "core/primitive.h"
#include "runtime/dispatch.h"
#include "spore/tensor.h"

namespace spore {

/// Trace membership of one tensor: one entry per frame that tracks it. Entries of closed frames
/// are ignored (a frame is found by uid among the open ones).
struct TraceSlot {
  struct Entry {
    uint64_t uid;    // the frame's unique id
    int64_t id;      // the tensor's value id in that frame (tapes, symbolic traces)
    Tensor tangent;  // forward-mode frames: the tangent (undefined = zero)
  };
  std::vector<Entry> entries;
};

namespace autodiff {

class Frame {
 public:
  enum class Kind : uint8_t { Tape, Forward, Symbolic };
  explicit Frame(Kind kind);
  virtual ~Frame() = default;
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;

  Kind kind() const { return kind_; }
  uint64_t uid() const { return uid_; }

  /// An op ran (eagerly, or symbolically in an inner trace) with at least one input this frame
  /// tracks. `depth` is this frame's index in the stack; rule ops must be emitted with only the
  /// frames below it active (use SuspendAbove).
  virtual void record(int depth, const Primitive& p, const void* attrs, std::span<const Tensor> in,
                      std::span<const Tensor> out) = 0;
  /// Symbolic frames only: the op runs nothing; build symbolic outputs of `types` into `out`
  /// (pre-sized) and record the op. Called for every op while this is the innermost symbolic
  /// frame.
  virtual void build(const Primitive& p, const void* attrs, std::span<const Tensor> in,
                     std::span<const TensorType> types, std::span<Tensor> out) {}
  /// Symbolic frames only: an in-place write of `value` (already dst's dtype and shape) into
  /// `dst`, functionalized (see runtime::TraceHooks::write). `op` names the op for messages.
  virtual void write(const Tensor& dst, const Tensor& value, const char* op) {}

 private:
  Kind kind_;
  uint64_t uid_;
};

/// Pushes `f` on this thread's stack (it becomes the innermost active frame).
void push_frame(Frame* f);
/// Pops `f`, which must be the innermost frame (transforms close in stack order).
void pop_frame(Frame* f);
/// Opens a frame for a scope; closes it on exit, exceptions included.
class FrameGuard {
 public:
  explicit FrameGuard(Frame* f) : f_(f) { push_frame(f); }
  ~FrameGuard() { close(); }
  void close() {
    if (f_) pop_frame(f_);
    f_ = nullptr;
  }
  FrameGuard(const FrameGuard&) = delete;
  FrameGuard& operator=(const FrameGuard&) = delete;

 private:
  Frame* f_;
};
/// While alive, only the frames below `depth` are active (the others are set aside, so frames
/// opened meanwhile stack on the active ones).
class SuspendAbove {
 public:
  explicit SuspendAbove(int depth);
  ~SuspendAbove();
  SuspendAbove(const SuspendAbove&) = delete;
  SuspendAbove& operator=(const SuspendAbove&) = delete;

 private:
  std::vector<Frame*> saved_;
};
/// The innermost active frame of a kind, or null.
Frame* innermost(Frame::Kind kind);
/// Active frames, outermost first.
std::span<Frame* const> active_frames();

/// The entry `t` has for frame `uid`, or null.
const TraceSlot::Entry* find_entry(const Tensor& t, uint64_t uid);
/// Adds an entry for a frame (t must not already have one for that uid).
void add_entry(const Tensor& t, TraceSlot::Entry e);
/// Removes `t`'s entry for frame `uid`, if any.
void remove_entry(const Tensor& t, uint64_t uid);
/// A new handle on the same data and geometry, with no trace entries: what a transform hands
/// to the function it traces, so the caller's tensors never join a trace.
Tensor fresh_alias(const Tensor& t);
/// `t` without its entry for frame `uid` (t itself when it has none); other entries are kept.
Tensor without_entry(const Tensor& t, uint64_t uid);

/// What dispatch does under a symbolic trace, for callers that bypass dispatch (control-flow
/// primitives, which have any number of outputs): when a symbolic frame is active, its innermost
/// one builds `out` (pre-sized to types) and the frames inside it record the op; returns false
/// when no symbolic frame is active.
bool trace_symbolic(const Primitive& p, const void* attrs, std::span<const Tensor> in,
                    std::span<const TensorType> types, std::span<Tensor> out);

/// What dispatch does after an eager op: every active frame tracking an input records it. For
/// callers that run an op's effect themselves (custom_vjp, checkpoint).
void record_eager(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const Tensor> out);

/// Installs the dispatch hooks and every primitive's rules (idempotent; called by each frame).
void install();

}  // namespace autodiff
}  // namespace spore
