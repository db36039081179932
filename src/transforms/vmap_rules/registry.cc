// SPDX-License-Identifier: Apache-2.0
// The vmap rule registry, the loop fallback and the helpers rules share.
#include <mutex>

#include "prims/random_key.h"
#include "spore/error.h"
#include "transforms/control_flow.h"
#include "transforms/vmap_rules/vmap_rules.h"

namespace spore::transforms::vmap_rules {

void def_vmap(const Primitive& prim, VmapRule rule) {
  // Rule slots are the one mutable part of a registered primitive, filled once at start-up.
  const_cast<Primitive&>(prim).vmap = rule;
}

void def_vmap(std::string_view name, VmapRule rule) {
  Primitive* p = find_primitive(name);
  SPORE_ASSERT(p != nullptr, "vmap rule for unknown primitive ", name);
  def_vmap(*p, rule);
}

void install_vmap_rules() {
  static std::once_flag once;
  std::call_once(once, [] {
    install_elementwise_vmap_rules();
    install_reduction_vmap_rules();
    install_shape_vmap_rules();
    install_nn_vmap_rules();
    install_random_vmap_rules();
    install_control_flow_vmap_rules();
  });
}

void vmap_by_loop(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
                  std::vector<Tensor>& out, std::vector<int>& out_axes) {
  const int64_t batch = batch_size(in, in_axes);
  std::vector<std::vector<Tensor>> lanes;
  std::vector<Tensor> args(in.size());
  for (int64_t b = 0; b < batch; ++b) {
    for (size_t i = 0; i < in.size(); ++i) args[i] = in_axes[i] >= 0 ? ops::select(in[i], in_axes[i], b) : in[i];
    std::vector<Tensor> r;
    if (is_control_flow(p)) r = call_control_flow(p, *static_cast<const ControlFlowAttrs*>(attrs), args);
    else r = call(p, attrs, args);
    if (lanes.empty()) lanes.resize(r.size());
    for (size_t j = 0; j < r.size(); ++j) lanes[j].push_back(std::move(r[j]));
  }
  out.clear();
  for (auto& l : lanes) out.push_back(ops::stack(l, 0));
  all_batched(out, out_axes);
}

namespace {
// Random fills take no data inputs; in a jit graph they take the generator key, never batched.
bool has_inputs(const Primitive& p) { return p.num_inputs != 0 && prims::random_data_inputs(p) != 0; }
}  // namespace

std::vector<std::string> primitives_using_loop() {
  install_vmap_rules();
  std::vector<std::string> names;
  for (const Primitive* p : all_primitives())
    if (has_inputs(*p) && (p->vmap == nullptr || p->vmap == &vmap_by_loop)) names.push_back(p->name);
  return names;
}

std::string registry_report() {
  install_vmap_rules();
  std::string s;
  int rules = 0, loops = 0, none = 0;
  std::string loop_list, none_list;
  for (const Primitive* p : all_primitives()) {
    if (!has_inputs(*p)) {
      ++none;
      none_list += " " + p->name;
    } else if (p->vmap == nullptr || p->vmap == &vmap_by_loop) {
      ++loops;
      loop_list += " " + p->name;
    } else {
      ++rules;
    }
  }
  s += detail::cat("vmap registry: ", all_primitives().size(), " primitives; batching rules ", rules,
                   ", loop fallback ", loops, ",", loop_list.empty() ? " none" : loop_list,
                   "; no tensor inputs (never batched, lanes share the result) ", none, ":", none_list);
  return s;
}

int64_t batch_size(std::span<const Tensor> in, std::span<const int> in_axes) {
  for (size_t i = 0; i < in.size(); ++i)
    if (in_axes[i] >= 0) return in[i].shape()[in_axes[i]];
  SPORE_ASSERT(false, "a vmap rule was called with no batched input");
  return 0;
}

Tensor lift(const Tensor& t, int64_t rank) {
  const int64_t r = t.dim() - 1;
  if (r >= rank) return t;
  Shape s{t.shape()[0]};
  for (int64_t i = r; i < rank; ++i) s.push_back(1);
  for (int64_t i = 1; i < t.dim(); ++i) s.push_back(t.shape()[i]);
  return ops::reshape(t, s);
}

Tensor batched(const Tensor& t, int axis, int64_t batch) {
  if (axis >= 0) return t;
  Shape s{batch};
  for (Dim d : t.shape()) s.push_back(d);
  return ops::broadcast_to(t, s);
}

Tensor fold(const Tensor& t) {
  Shape s{t.shape()[0] * t.shape()[1]};
  for (int64_t i = 2; i < t.dim(); ++i) s.push_back(t.shape()[i]);
  return ops::reshape(t, s);
}

Tensor unfold(const Tensor& t, int64_t batch) {
  Shape s{batch, t.shape()[0] / batch};
  for (int64_t i = 1; i < t.dim(); ++i) s.push_back(t.shape()[i]);
  return ops::reshape(t, s);
}

std::vector<Tensor> call(const Primitive& p, const void* attrs, std::span<const Tensor> in) {
  auto r = runtime::dispatch(p, attrs, in);
  return std::vector<Tensor>(r.t.begin(), r.t.begin() + r.n);
}

}  // namespace spore::transforms::vmap_rules
