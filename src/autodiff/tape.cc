// SPDX-License-Identifier: Apache-2.0
#include "autodiff/tape.h"

#include "runtime/dispatch.h"
#include "spore/error.h"
#include "spore/ops.h"

namespace spore::autodiff {

Tensor Tape::track(const Tensor& t) {
  Tensor a = fresh_alias(t);
  // Keep the caller's entries for outer frames (a grad inside a grad differentiates the same
  // tensor at both levels); fresh_alias dropped them, so copy them back.
  if (t.impl()->trace) a.impl()->trace = std::make_shared<TraceSlot>(*t.impl()->trace);
  add_entry(a, {uid(), next_id_++, Tensor()});
  return a;
}

int64_t Tape::id_of(const Tensor& t) const {
  const auto* e = find_entry(t, uid());
  return e ? e->id : -1;
}

void Tape::record(int depth, const Primitive& p, const void* attrs, std::span<const Tensor> in,
                  std::span<const Tensor> out) {
  // An op with no floating output carries no gradient (comparisons, argmax, integer math).
  bool any_float_out = false;
  for (const Tensor& t : out) any_float_out |= is_floating(t.dtype());
  if (!any_float_out) return;
  Node n;
  n.prim = &p;
  n.attrs = p.attrs.clone(attrs);
  n.in_ids.resize(in.size());
  n.types.reserve(in.size() + out.size());
  n.saved.resize(in.size() + out.size());
  n.versions.resize(in.size() + out.size());
  for (size_t i = 0; i < in.size(); ++i) {
    n.in_ids[i] = id_of(in[i]);
    n.types.push_back(runtime::type_of(in[i]));
    if (Residuals::has(p.residuals.inputs, i)) {
      n.saved[i] = in[i];
      n.versions[i] = in[i].version();
    }
  }
  n.out_ids.resize(out.size());
  for (size_t j = 0; j < out.size(); ++j) {
    SPORE_ASSERT(!out[j].is_same(in.empty() ? Tensor() : in[0]), p.name, " returned its input object");
    n.out_ids[j] = next_id_++;
    add_entry(out[j], {uid(), n.out_ids[j], Tensor()});
    n.types.push_back(runtime::type_of(out[j]));
    if (Residuals::has(p.residuals.outputs, j)) {
      n.saved[in.size() + j] = out[j];
      n.versions[in.size() + j] = out[j].version();
    }
  }
  nodes_.push_back(std::move(n));
}

namespace {

void accumulate(Tensor& acc, Tensor v) {
  if (!acc.defined()) acc = std::move(v);
  else acc = acc + v;
}

}  // namespace

std::vector<Tensor> Tape::backward(std::span<const int64_t> roots, std::span<const Tensor> root_cts,
                                   std::span<const int64_t> wanted, std::span<const TensorType> wanted_types,
                                   bool consume) {
  std::vector<Tensor> ct(static_cast<size_t>(next_id_));
  for (size_t r = 0; r < roots.size(); ++r)
    if (roots[r] >= 0 && root_cts[r].defined()) accumulate(ct[roots[r]], root_cts[r]);

  // Values asked for are never freed early (one may also feed a later node).
  std::vector<char> keep(static_cast<size_t>(next_id_), 0);
  for (int64_t w : wanted)
    if (w >= 0) keep[w] = 1;

  std::vector<Tensor> cts, in_cts;
  std::vector<char> needs_storage;
  for (size_t k = nodes_.size(); k-- > 0;) {
    Node& n = nodes_[k];
    bool any = false;
    for (int64_t o : n.out_ids) any |= ct[o].defined();
    if (any) {
      const Primitive& p = *n.prim;
      SPORE_CHECK(!p.compiler_made, "[grad] '", p.name, "' is a node the graph compiler made (a model file saved ",
                  "after `spore convert --optimize` holds them); differentiate the model saved without --optimize");
      SPORE_CHECK(p.vjp != nullptr, "[grad] primitive '", p.name,
                  "' has no reverse-mode (vjp) rule, so gradients cannot flow through it; wrap the input in "
                  "stop_gradient() if no gradient is needed there");
      const size_t ni = n.in_ids.size(), no = n.out_ids.size();
      for (size_t s = 0; s < n.saved.size(); ++s)
        if (n.saved[s].defined() && n.saved[s].version() != n.versions[s])
          throw Error(detail::cat("[grad] a tensor that '", p.name, "' saved for the backward pass (its ",
                                  s < ni ? "input " : "output ", s < ni ? s : s - ni,
                                  ") was modified in place after it was saved; use an out-of-place op or clone() it ",
                                  "before modifying"));
      cts.assign(no, Tensor());
      for (size_t j = 0; j < no; ++j) {
        cts[j] = ct[n.out_ids[j]];
        if (!cts[j].defined() && no > 1 && !p.sparse_cotangents && is_floating(n.types[ni + j].dtype))
          cts[j] = ops::zeros(n.types[ni + j].shape, {n.types[ni + j].dtype});
      }
      needs_storage.assign(ni, 0);
      bool need_any = false;
      for (size_t i = 0; i < ni; ++i) {
        needs_storage[i] = n.in_ids[i] >= 0 && is_floating(n.types[i].dtype);
        need_any |= needs_storage[i] != 0;
      }
      if (need_any) {
        in_cts.assign(ni, Tensor());
        static_assert(sizeof(bool) == sizeof(char));
        VjpArgs a{n.attrs.get(),
                  std::span<const Tensor>(n.saved.data(), ni),
                  std::span<const Tensor>(n.saved.data() + ni, no),
                  std::span<const TensorType>(n.types.data(), ni),
                  std::span<const TensorType>(n.types.data() + ni, no),
                  cts,
                  std::span<const bool>(reinterpret_cast<const bool*>(needs_storage.data()), ni)};
        p.vjp(a, in_cts);
        for (size_t i = 0; i < ni; ++i) {
          if (!needs_storage[i] || !in_cts[i].defined()) continue;
          SPORE_ASSERT(in_cts[i].shape() == n.types[i].shape && in_cts[i].dtype() == n.types[i].dtype, "vjp of ",
                       p.name, " gave input ", i, " a cotangent of ", shape_str(in_cts[i].shape()), " ",
                       dtype_name(in_cts[i].dtype()), " for a ", shape_str(n.types[i].shape), " ",
                       dtype_name(n.types[i].dtype), " input");
          accumulate(ct[n.in_ids[i]], std::move(in_cts[i]));
        }
      }
      if (consume)
        for (int64_t o : n.out_ids)
          if (!keep[o]) ct[o] = Tensor();
    }
    if (consume) nodes_.pop_back();  // frees this node's residuals now, not at the end
  }
  std::vector<Tensor> result(wanted.size());
  for (size_t w = 0; w < wanted.size(); ++w) {
    if (wanted[w] >= 0 && ct[wanted[w]].defined()) result[w] = ct[wanted[w]];
    else result[w] = ops::zeros(wanted_types[w].shape, {wanted_types[w].dtype});
  }
  return result;
}

void Tape::map_saved(const std::function<Tensor(const Tensor&)>& f) {
  for (Node& n : nodes_)
    for (size_t s = 0; s < n.saved.size(); ++s)
      if (n.saved[s].defined()) {
        n.saved[s] = f(n.saved[s]);
        n.versions[s] = n.saved[s].version();
      }
}

}  // namespace spore::autodiff
