// SPDX-License-Identifier: Apache-2.0
#pragma once
// The primitive contract (shared/ARCHITECTURE.md, "Ops and primitives"). A primitive is a node
// kind that the IR, the transforms and the backends know; it is defined once, in one file under
// src/prims, and registered once through define_primitive().
#include <array>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/attrs.h"
#include "spore/device.h"
#include "spore/dtype.h"
#include "spore/shape.h"
#include "spore/tensor.h"

namespace spore {

/// What a primitive does besides computing its outputs from its inputs.
enum class Effect : uint8_t { Pure, Random, State, IO, Collective };
/// How the fusion pass may group a primitive.
enum class FusionClass : uint8_t { Opaque, Elementwise, Broadcast, Injective, Reduction, Matmul, Conv };

/// The static type of a value: dtype, weak flag and shape (dims may be symbolic).
/// `channels_last` is false except inside compiled plans, where the layout pass
/// (passes/plan_layout.h) may store a conv activation channels-last (strides:
/// channels_last_strides); kernels prepared for such a type get buffers with those strides.
struct TensorType {
  DType dtype = DType::Float32;
  bool weak = false;
  Shape shape;
  bool channels_last = false;
};

/// The strides a value of type `t` is stored with: row-major, or channels-last.
inline Strides storage_strides(const TensorType& t) {
  return t.channels_last ? channels_last_strides(t.shape) : contiguous_strides(t.shape);
}

/// Up to 4 types or tensors inline; primitives have a fixed, small number of outputs.
inline constexpr int kMaxOutputs = 4;
struct OutTypes {
  std::array<TensorType, kMaxOutputs> t;
  int n = 0;
  TensorType& add(DType dtype, Shape shape) {
    t[n].dtype = dtype;
    t[n].shape = std::move(shape);
    return t[n++];
  }
};

/// A kernel's view of one tensor: no ownership, no Tensor.
struct Buffer {
  void* data = nullptr;
  DType dtype = DType::Float32;
  int ndim = 0;
  const Dim* shape = nullptr;
  const int64_t* strides = nullptr;  // in elements
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    return n;
  }
  bool contiguous() const {
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; --i) {
      if (shape[i] != 1 && strides[i] != s) return false;
      s *= shape[i];
    }
    return true;
  }
  template <class T>
  T* ptr() const { return static_cast<T*>(data); }
};

/// Scratch memory and stream for one kernel call (CPU has no stream).
struct KernelContext {
  void* scratch = nullptr;
  size_t scratch_bytes = 0;
  void* stream = nullptr;
  /// Per input, when the caller knows it: a stamp that changes whenever the input's content may
  /// have (its storage's version), 0 when unknown. A prepared kernel may keep work made from an
  /// input (reordered weights) for as long as the input's pointer and stamp stay the same.
  const uint64_t* input_stamps = nullptr;
};

/// A kernel after its `prepare` step (library primitive created, weights packed, scratch sized)
/// for one set of types, shapes and attributes; `run` may be called many times.
class PreparedKernel {
 public:
  virtual ~PreparedKernel() = default;
  virtual size_t scratch_bytes() const { return 0; }
  virtual void run(std::span<const Buffer> in, std::span<const Buffer> out,
                   const KernelContext& ctx) const = 0;
};

using KernelRunFn = void (*)(const void* attrs, std::span<const Buffer> in,
                             std::span<const Buffer> out, const KernelContext& ctx);
using KernelPrepareFn = std::shared_ptr<PreparedKernel> (*)(const void* attrs,
                                                            std::span<const TensorType> in,
                                                            std::span<const TensorType> out);
using KernelSupportsFn = bool (*)(const void* attrs, std::span<const TensorType> in);
using KernelLayoutFn = bool (*)(const void* attrs, std::span<const TensorType> in, int input);
using KernelFusedPrefixFn = size_t (*)(const void* attrs, std::span<const TensorType> in);

/// One kernel of a primitive on one device. A kernel is either stateless (`run`) or two-step
/// (`prepare` then the prepared kernel's run, cached per types, shapes and attributes).
/// Device kernels say what they `supports`; the CPU reference kernel supports everything.
struct KernelDef {
  DeviceType device = DeviceType::CPU;
  const char* name = "reference";
  int priority = 0;  // the highest-priority kernel that supports a call runs it
  KernelSupportsFn supports = nullptr;  // null: every call
  KernelRunFn run = nullptr;
  KernelPrepareFn prepare = nullptr;
  /// Non-null when the kernel's fast path computes in channels-last memory: whether it does for
  /// input `input` (-1: output 0) of this call, so a plan may store that value channels-last
  /// (TensorType::channels_last) and save the kernel's reorders. Every kernel reads strided
  /// inputs correctly; this is only about speed, and about kernels writing strided outputs.
  KernelLayoutFn takes_channels_last = nullptr;
  /// Non-null for a kernel of a compiler-made fused primitive with an epilogue (matmul_fused):
  /// how many leading post-ops of this call it applies inside the product, as it writes the
  /// result (oneDNN's brgemm post-ops); the rest run in passes of their own after it. The pass
  /// that forms such nodes asks, and leaves to the fusion pass what would run after the product.
  KernelFusedPrefixFn fused_post_ops = nullptr;
};

/// Work estimate for the cost model and the profiler.
struct Cost {
  double flops = 0;
  double bytes = 0;
};

class Primitive;
// Transform rules (filled by src/autodiff; written with public ops so they compose: the ops a
// rule emits are themselves recorded by outer traces and tapes, which gives grad of grad, jvp of
// grad and jit of grad with no special code). A cotangent or tangent has its primal's dtype and
// shape; an undefined tensor means zero.

/// What a forward-mode rule sees: every primal input and output, and one tangent per input
/// (undefined where the input has none: a constant, an integer, a literal).
struct JvpArgs {
  const void* attrs;
  std::span<const Tensor> inputs;
  std::span<const Tensor> outputs;
  std::span<const Tensor> tangents;
};
/// Fills `out_tangents` (one per output, pre-sized; leave undefined for a zero or for an
/// output that is not differentiable, such as integer indices).
using JvpRule = void (*)(const JvpArgs& a, std::span<Tensor> out_tangents);

/// What a reverse-mode rule sees. `inputs`/`outputs` hold the tensors the primitive declared in
/// its Residuals (undefined elsewhere: they were not kept); their types are always there.
struct VjpArgs {
  const void* attrs;
  std::span<const Tensor> inputs;
  std::span<const Tensor> outputs;
  std::span<const TensorType> in_types;
  std::span<const TensorType> out_types;
  /// One per output; undefined = zero (for multi-output primitives, or integer outputs).
  std::span<const Tensor> cotangents;
  /// needs[i]: the cotangent of input i is wanted (a float input that a trace tracks).
  std::span<const bool> needs;
};
/// Fills `in_cotangents` (one per input, pre-sized) where needs[i]; undefined = zero.
using VjpRule = void (*)(const VjpArgs& a, std::span<Tensor> in_cotangents);
using VmapRule = void (*)(const Primitive& p, const void* attrs, std::span<const Tensor> in,
                          std::span<const int> in_axes, std::vector<Tensor>& out,
                          std::vector<int>& out_axes);
struct ShardingRule;  // a dimension mapping; defined by src/parallel
/// Rewrites a call in terms of smaller primitives (softmax, norms, gelu, attention ...).
/// For view primitives (reshape, transpose, slice, expand ...): makes the output as a view of
/// input 0 with no kernel and no copy. `out` is the inferred type.
using ViewFn = Tensor (*)(const void* attrs, const Tensor& in, const TensorType& out);
using Decomposition = void (*)(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out);

/// Control-flow primitives (if, switch, while, scan; defined in src/transforms) run with tensors,
/// interpreting their sub-graphs through dispatch: they have no kernels and any number of
/// outputs, and are called through transforms::call_control_flow, never through dispatch.
using EagerFn = void (*)(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out);

/// Which inputs and outputs the vjp needs kept alive (bit i = input/output i).
struct Residuals {
  uint32_t inputs = 0;
  uint32_t outputs = 0;
  /// Whether position i is kept; bit 31 also stands for every later position, so ~0u keeps all
  /// of any number (control-flow nodes have any number of inputs and outputs).
  static bool has(uint32_t mask, size_t i) { return ((mask >> (i < 31 ? i : 31)) & 1u) != 0; }
};

/// The sizes a call's input values give to symbols in a primitive's attributes: (symbol, size).
using ValueSizesFn = void (*)(const void* attrs, std::span<const Tensor> in,
                              std::vector<std::pair<Dim, int64_t>>& sizes);

using InferFn = std::function<void(const void* attrs, std::span<const TensorType> in, OutTypes& out)>;
using CostFn = std::function<Cost(const void* attrs, std::span<const TensorType> in,
                                  std::span<const TensorType> out)>;

/// Type-erased operations on a primitive's attribute struct.
struct AttrOps {
  size_t (*hash)(const void*) = nullptr;
  bool (*equal)(const void*, const void*) = nullptr;
  std::string (*str)(const void*) = nullptr;
  std::shared_ptr<const void> (*clone)(const void*) = nullptr;
  /// Inverse of str (the IR text form); throws spore::Error on bad text.
  std::shared_ptr<const void> (*parse)(std::string_view) = nullptr;
  /// A copy with every symbolic dimension passed through the function (binding a graph's
  /// symbols to a call's sizes).
  std::shared_ptr<const void> (*map_dims)(const void*, const std::function<Dim(Dim)>&) = nullptr;
};

/// A node kind. Immutable after registration, except for transform-rule slots filled at start-up.
class Primitive {
 public:
  uint16_t id = 0;
  std::string name;
  Effect effect = Effect::Pure;
  FusionClass fusion = FusionClass::Opaque;
  int num_inputs = -1;  // -1: variadic
  AttrOps attrs;
  InferFn infer = nullptr;
  CostFn cost = nullptr;
  std::array<std::vector<KernelDef>, kNumDeviceTypes> kernels;
  ViewFn view = nullptr;  // set for view primitives, which have no kernels
  EagerFn eager = nullptr;  // set for control-flow primitives, which have no kernels
  Residuals residuals;
  /// The vjp takes an undefined cotangent for an output that received none (else the tape hands
  /// multi-output primitives zeros). Control flow sets it: most outputs of a node built for
  /// reverse mode are residuals that nothing differentiates.
  bool sparse_cotangents = false;
  /// Made only by a compiler pass after autodiff (`fused`, `conv_fused`): it never meets a
  /// transform, so it has no jvp/vjp/vmap rule, and tests check it against the unfused ops it
  /// replaces rather than in the per-primitive tables.
  bool compiler_made = false;
  JvpRule jvp = nullptr;
  VjpRule vjp = nullptr;
  VmapRule vmap = nullptr;
  const ShardingRule* sharding = nullptr;
  Decomposition decomposition = nullptr;
  /// Set for a primitive whose attributes may name sizes that only its inputs' values give
  /// (value symbols, shape.h: nonzero's count, bind_sizes' list). A graph interpreter calls it
  /// before the node runs, with the inputs' values, and binds those symbols for the rest of the
  /// call, so this node and every later one run at the sizes the values give. Plans cannot lay
  /// such values out before the call; graphs with them are interpreted.
  ValueSizesFn value_sizes = nullptr;

  /// Registers a kernel (kept sorted by priority, highest first).
  void add_kernel(KernelDef k);
};

/// What a primitive file gives define_primitive().
template <class Attrs>
struct PrimitiveSpec {
  std::string name;
  Effect effect = Effect::Pure;
  FusionClass fusion = FusionClass::Opaque;
  int num_inputs = -1;
  void (*infer)(const Attrs& a, std::span<const TensorType> in, OutTypes& out) = nullptr;
  Cost (*cost)(const Attrs& a, std::span<const TensorType> in, std::span<const TensorType> out) = nullptr;
  Residuals residuals;
  ViewFn view = nullptr;
  bool compiler_made = false;
};

/// The one registration mechanism. Returns the registered primitive; names must be unique.
Primitive& register_primitive(Primitive p);
/// All registered primitives, by id.
std::span<Primitive* const> all_primitives();
/// Lookup by name for tools and tests (never on the hot path); null if unknown.
Primitive* find_primitive(std::string_view name);

template <class Attrs>
Primitive& define_primitive(const PrimitiveSpec<Attrs>& spec) {
  Primitive p;
  p.name = spec.name;
  p.effect = spec.effect;
  p.fusion = spec.fusion;
  p.num_inputs = spec.num_inputs;
  p.residuals = spec.residuals;
  p.view = spec.view;
  p.compiler_made = spec.compiler_made;
  p.attrs.hash = [](const void* a) { return attrs_hash(*static_cast<const Attrs*>(a)); };
  p.attrs.equal = [](const void* a, const void* b) {
    return attrs_equal(*static_cast<const Attrs*>(a), *static_cast<const Attrs*>(b));
  };
  p.attrs.str = [](const void* a) { return attrs_str(*static_cast<const Attrs*>(a)); };
  p.attrs.clone = [](const void* a) -> std::shared_ptr<const void> {
    return std::make_shared<Attrs>(*static_cast<const Attrs*>(a));
  };
  p.attrs.parse = [](std::string_view text) -> std::shared_ptr<const void> {
    return std::make_shared<Attrs>(attrs_parse<Attrs>(text));
  };
  p.attrs.map_dims = [](const void* a, const std::function<Dim(Dim)>& f) -> std::shared_ptr<const void> {
    return std::make_shared<Attrs>(attrs_map_dims(*static_cast<const Attrs*>(a), f));
  };
  auto infer = spec.infer;
  SPORE_ASSERT(infer != nullptr, "primitive ", spec.name, " has no type inference");
  p.infer = [infer](const void* a, std::span<const TensorType> in, OutTypes& out) {
    infer(*static_cast<const Attrs*>(a), in, out);
  };
  if (auto cost = spec.cost) {
    p.cost = [cost](const void* a, std::span<const TensorType> in, std::span<const TensorType> out) {
      return cost(*static_cast<const Attrs*>(a), in, out);
    };
  }
  Primitive& reg = register_primitive(std::move(p));
  return reg;
}

}  // namespace spore
