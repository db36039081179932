// SPDX-License-Identifier: Apache-2.0
#include "autodiff/forward.h"

#include "runtime/dispatch.h"
#include "spore/error.h"

namespace spore::autodiff {

Tensor Forward::track(const Tensor& primal, const Tensor& tangent) {
  Tensor a = fresh_alias(primal);
  if (primal.impl()->trace) a.impl()->trace = std::make_shared<TraceSlot>(*primal.impl()->trace);
  add_entry(a, {uid(), -1, tangent});
  return a;
}

Tensor Forward::tangent_of(const Tensor& t) const {
  const auto* e = find_entry(t, uid());
  return e ? e->tangent : Tensor();
}

void Forward::record(int depth, const Primitive& p, const void* attrs, std::span<const Tensor> in,
                     std::span<const Tensor> out) {
  constexpr int kInline = 8;
  Tensor inline_t[kInline];
  std::vector<Tensor> heap;
  Tensor* tangents = inline_t;
  if (in.size() > kInline) {
    heap.resize(in.size());
    tangents = heap.data();
  }
  bool any = false;
  for (size_t i = 0; i < in.size(); ++i) {
    if (is_floating(in[i].dtype())) tangents[i] = tangent_of(in[i]);
    any |= tangents[i].defined();
  }
  bool any_float_out = false;
  for (const Tensor& t : out) any_float_out |= is_floating(t.dtype());
  if (!any || !any_float_out) return;
  SPORE_CHECK(!p.compiler_made, "[jvp] '", p.name, "' is a node the graph compiler made (a model file saved after ",
              "`spore convert --optimize` holds them); differentiate the model saved without --optimize");
  SPORE_CHECK(p.jvp != nullptr, "[jvp] primitive '", p.name,
              "' has no forward-mode (jvp) rule, so tangents cannot flow through it; wrap the input in "
              "stop_gradient() if no derivative is needed there");
  // Control-flow primitives have any number of outputs; others at most kMaxOutputs.
  std::array<Tensor, kMaxOutputs> out_inline;
  std::vector<Tensor> out_heap;
  Tensor* out_t = out_inline.data();
  if (out.size() > out_inline.size()) {
    out_heap.resize(out.size());
    out_t = out_heap.data();
  }
  {
    SuspendAbove outer_only(depth);
    JvpArgs a{attrs, in, out, std::span<const Tensor>(tangents, in.size())};
    p.jvp(a, std::span<Tensor>(out_t, out.size()));
  }
  for (size_t j = 0; j < out.size(); ++j) {
    if (!out_t[j].defined() || !is_floating(out[j].dtype())) continue;
    SPORE_ASSERT(out_t[j].shape() == out[j].shape() && out_t[j].dtype() == out[j].dtype(), "jvp of ", p.name,
                 " gave output ", j, " a tangent of ", shape_str(out_t[j].shape()), " ", dtype_name(out_t[j].dtype()),
                 " for a ", shape_str(out[j].shape()), " ", dtype_name(out[j].dtype()), " output");
    add_entry(out[j], {uid(), -1, std::move(out_t[j])});
  }
}

}  // namespace spore::autodiff
