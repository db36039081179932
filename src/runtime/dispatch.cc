// SPDX-License-Identifier: Apache-2.0
#include "runtime/dispatch.h"

#include <omp.h>

#include <mutex>
#include <unordered_map>
#include <vector>

#include "runtime/allocator.h"
#include "runtime/trace_hooks.h"
#include "spore/threading.h"

namespace spore::runtime {
namespace {

TraceHooks g_hooks;

// Prepared kernels are cached per thread, keyed by primitive, kernel, attributes and input
// types (shapes included): prepare runs once per distinct call signature.
struct PreparedKey {
  const Primitive* prim;
  int threads;  // library primitives (oneDNN) fix their thread count when created
  const KernelDef* kernel;
  std::shared_ptr<const void> attrs;
  std::vector<TensorType> in;
};

struct PreparedEntry {
  PreparedKey key;
  std::shared_ptr<PreparedKernel> kernel;
};

size_t hash_types(std::span<const TensorType> in) {
  size_t h = in.size();
  auto mix = [&](size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  for (auto& t : in) {
    mix(static_cast<size_t>(t.dtype));
    for (Dim d : t.shape) mix(static_cast<size_t>(d));
  }
  return h;
}

bool same_types(std::span<const TensorType> a, std::span<const TensorType> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].dtype != b[i].dtype || !(a[i].shape == b[i].shape)) return false;
  return true;
}

const PreparedKernel& prepared_kernel(const Primitive& p, const KernelDef& k, const void* attrs,
                                      std::span<const TensorType> in, std::span<const TensorType> out) {
  thread_local std::unordered_multimap<size_t, PreparedEntry> cache;
  // Bounded: programs with ever-changing shapes (variable batch or sequence length) must not
  // grow it without limit; re-preparing after a reset is cheap next to a leak.
  constexpr size_t kMaxPrepared = 2048;
  if (cache.size() >= kMaxPrepared) cache.clear();
  const int threads = num_threads();
  size_t h = p.attrs.hash(attrs) * 31 + hash_types(in) + reinterpret_cast<size_t>(&k) + static_cast<size_t>(threads) * 1000003u;
  auto range = cache.equal_range(h);
  for (auto it = range.first; it != range.second; ++it) {
    auto& key = it->second.key;
    if (key.prim == &p && key.kernel == &k && key.threads == threads && p.attrs.equal(key.attrs.get(), attrs) && same_types(key.in, in))
      return *it->second.kernel;
  }
  auto prepared = k.prepare(attrs, in, out);
  SPORE_ASSERT(prepared != nullptr, "kernel ", k.name, " of ", p.name, " failed to prepare");
  auto it = cache.emplace(h, PreparedEntry{{&p, threads, &k, p.attrs.clone(attrs), {in.begin(), in.end()}}, std::move(prepared)});
  return *it->second.kernel;
}

Buffer buffer_of(const Tensor& t) {
  Buffer b;
  b.data = t.data_ptr();
  b.dtype = t.dtype();
  b.ndim = static_cast<int>(t.dim());
  b.shape = t.shape().data();
  b.strides = t.strides().data();
  return b;
}

}  // namespace

void set_trace_hooks(const TraceHooks& hooks) { g_hooks = hooks; }
const TraceHooks& trace_hooks() { return g_hooks; }

TensorType type_of(const Tensor& t) { return {t.dtype(), t.weak(), t.shape()}; }

Outputs dispatch(const Primitive& p, const void* attrs, std::span<const Tensor> inputs, Device device) {
  constexpr int kInline = 8;
  TensorType in_inline[kInline];
  std::vector<TensorType> in_heap;
  TensorType* in_types = in_inline;
  if (inputs.size() > kInline) {
    in_heap.resize(inputs.size());
    in_types = in_heap.data();
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    SPORE_CHECK(t.defined(), "[", p.name, "] input ", i, " is an undefined tensor");
    if (t.impl()->trace != nullptr && tls_open_traces == 0 && g_hooks.foreign) [[unlikely]]
      g_hooks.foreign(p, t);
    in_types[i].dtype = t.dtype();
    in_types[i].weak = t.weak();
    in_types[i].shape = t.shape();
  }
  SPORE_ASSERT(p.num_inputs < 0 || static_cast<size_t>(p.num_inputs) == inputs.size(), p.name, " takes ",
               p.num_inputs, " inputs, got ", inputs.size());
  std::span<const TensorType> in_span(in_types, inputs.size());

  OutTypes types;
  p.infer(attrs, in_span, types);
  for (int i = 0; i < types.n; ++i)
    SPORE_CHECK(types.t[i].shape.size() <= static_cast<size_t>(kMaxRank), "[", p.name, "] the result would have rank ",
                types.t[i].shape.size(), ", over the limit of ", kMaxRank, "; merge dimensions with reshape");

  Outputs out;
  out.n = types.n;
  if (tls_open_traces != 0) [[unlikely]] {
    if (g_hooks.symbolic && g_hooks.symbolic(p, attrs, inputs, types, out)) return out;
  }

  // Under a symbolic trace nothing runs, so devices are not checked: traced tensors live on the
  // meta device beside captured CPU tensors.
  // The device comes from the tensor operands; weak 0-d literals (x * 2.0) live on the CPU and
  // go with any device, as PyTorch's CPU scalars do.
  size_t lead = inputs.size();
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!(inputs[i].weak() && inputs[i].dim() == 0)) {
      lead = i;
      break;
    }
  if (!inputs.empty()) {
    if (lead == inputs.size()) lead = 0;
    device = inputs[lead].device();
    for (size_t i = 0; i < inputs.size(); ++i)
      SPORE_CHECK(inputs[i].device() == device || (inputs[i].weak() && inputs[i].dim() == 0), "[", p.name,
                  "] inputs are on different devices: input ", lead, " on ", device.str(), ", input ", i, " on ",
                  inputs[i].device().str(), "; move them to one device");
  }
  // A symbolic size that no one bound (a graph run without its symbols' values) must not reach
  // a view's strides or a kernel's loops: Tensor::empty refuses it for allocations, this for views.
  if (device.type != DeviceType::Meta && p.view) {
    for (Dim d : types.t[0].shape)
      SPORE_CHECK(!is_symbolic(d), "[", p.name, "] would make a value of shape ", shape_str(types.t[0].shape),
                  " when it runs: the symbolic size ", dim_str(d), " has no value here (a graph run without binding it)");
  }
  if (p.view) {
    out.t[0] = p.view(attrs, inputs[0], types.t[0]);
  } else {
    for (int i = 0; i < types.n; ++i) {
      out.t[i] = Tensor::empty(types.t[i].shape, types.t[i].dtype, device);
      out.t[i].impl()->weak = types.t[i].weak;
    }
    if (device.type != DeviceType::Meta) {
      const auto& kernels = p.kernels[static_cast<int>(device.type)];
      const KernelDef* k = nullptr;
      for (const auto& cand : kernels) {
        if (!cand.supports || cand.supports(attrs, in_span)) {
          k = &cand;
          break;
        }
      }
      SPORE_CHECK(k != nullptr, "[", p.name, "] has no ", device.str(), " kernel for these inputs");
      Buffer in_buf[kInline];
      std::vector<Buffer> in_buf_heap;
      Buffer* ib = in_buf;
      if (inputs.size() > kInline) {
        in_buf_heap.resize(inputs.size());
        ib = in_buf_heap.data();
      }
      for (size_t i = 0; i < inputs.size(); ++i) ib[i] = buffer_of(inputs[i]);
      Buffer ob[kMaxOutputs];
      for (int i = 0; i < out.n; ++i) ob[i] = buffer_of(out.t[i]);
      std::span<const Buffer> ins(ib, inputs.size()), outs(ob, out.n);
      // OpenMP's thread count is per calling thread; library kernels (oneDNN) read it.
      if (omp_get_max_threads() != num_threads()) omp_set_num_threads(num_threads());
      KernelContext ctx;
      if (k->run) {
        k->run(attrs, ins, outs, ctx);
      } else {
        std::span<const TensorType> out_span(types.t.data(), types.n);
        const PreparedKernel& pk = prepared_kernel(p, *k, attrs, in_span, out_span);
        size_t scratch = pk.scratch_bytes();
        ScratchBuffer sb(allocator_for(device), scratch);
        ctx.scratch = sb.get();
        ctx.scratch_bytes = scratch;
        pk.run(ins, outs, ctx);
      }
    }
  }
  if (tls_open_traces != 0) [[unlikely]] {
    if (g_hooks.record) g_hooks.record(p, attrs, inputs, std::span<const Tensor>(out.t.data(), out.n));
  }
  return out;
}

}  // namespace spore::runtime
