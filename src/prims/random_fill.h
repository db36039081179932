// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers shared by the random primitives with no inputs (random.cc, random_int.cc).
#include <algorithm>

#include "core/primitive.h"
#include "prims/elementwise_infer.h"
#include "prims/random_key.h"
#include "runtime/parallel.h"

namespace spore::prims::random_detail {

/// out[i] = f(i) for every element of a contiguous output. f depends on i alone, so the split
/// over threads (`cost` scales the grain) never changes the values.
template <class T, class F>
void fill_random(const Buffer& out, int64_t cost, F&& f) {
  T* o = out.ptr<T>();
  runtime::parallel_for(out.numel(), std::max<int64_t>(1, runtime::kParallelGrain / cost), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) o[i] = f(static_cast<uint64_t>(i));
  });
}

/// An Effect::Random primitive with no data inputs whose attributes carry `shape` and `dtype`;
/// in a jit graph it takes the generator's key as its one input (prims/random_key.h).
template <class Attrs>
const Primitive& define_fill(const char* name, KernelRunFn run, double flops_per_element) {
  PrimitiveSpec<Attrs> spec;
  spec.name = name;
  spec.effect = Effect::Random;
  spec.fusion = FusionClass::Elementwise;
  spec.num_inputs = -1;  // none, or the key
  spec.infer = [](const Attrs& a, std::span<const TensorType>, OutTypes& out) { out.add(a.dtype, a.shape); };
  Primitive& p = define_primitive(spec);
  p.infer = [name](const void* attrs, std::span<const TensorType> in, OutTypes& out) {
    check_key_input(name, in, 0);
    const auto& a = *static_cast<const Attrs*>(attrs);
    out.add(a.dtype, a.shape);
  };
  p.cost = [flops_per_element](const void* attrs, std::span<const TensorType>, std::span<const TensorType>) {
    const auto& a = *static_cast<const Attrs*>(attrs);
    const double n = cost_numel(a.shape);
    return Cost{n * flops_per_element, n * static_cast<double>(dtype_size(a.dtype))};
  };
  p.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = run});
  return p;
}

}  // namespace spore::prims::random_detail
