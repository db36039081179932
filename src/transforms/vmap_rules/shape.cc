// SPDX-License-Identifier: Apache-2.0
// vmap rules of the shape primitives: views, concat, pad/flip/roll, gather/scatter, tri,
// one_hot, embedding. Each adds the batch axis in front of its attributes' view of the input
// (a reshape to (B, shape...), a permutation fixing axis 0, a full slice of axis 0, ...), so the
// primitive runs once; views stay views.
#include "prims/concat.h"
#include "prims/gather.h"
#include "prims/pad.h"
#include "prims/views.h"
#include "transforms/vmap_rules/vmap_rules.h"

namespace spore::transforms::vmap_rules {
namespace {

// Runs `p` with attributes `a` on `args` (all batched along axis 0).
template <class Attrs>
void run(const Primitive& p, const Attrs& a, std::vector<Tensor> args, std::vector<Tensor>& out,
         std::vector<int>& out_axes) {
  out = call(p, &a, args);
  all_batched(out, out_axes);
}

// Runs `p` unchanged: primitives that map leading dims one to one (tri, one_hot, embedding's
// indices), so a leading batch axis is just one more of them.
void leading_dims(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
                  std::vector<Tensor>& out, std::vector<int>& out_axes) {
  out = call(p, attrs, in);
  out_axes.assign(out.size(), 0);
}

void reshape(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int>,
             std::vector<Tensor>& out, std::vector<int>& out_axes) {
  prims::ReshapeAttrs a = *static_cast<const prims::ReshapeAttrs*>(attrs);
  a.shape.insert(0, in[0].shape()[0]);
  run(p, a, {in[0]}, out, out_axes);
}

void permute(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int>,
             std::vector<Tensor>& out, std::vector<int>& out_axes) {
  prims::PermuteAttrs a = *static_cast<const prims::PermuteAttrs*>(attrs);
  a.axes = shifted(a.axes);
  a.axes.insert(0, 0);
  run(p, a, {in[0]}, out, out_axes);
}

void slice(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int>,
           std::vector<Tensor>& out, std::vector<int>& out_axes) {
  prims::SliceAttrs a = *static_cast<const prims::SliceAttrs*>(attrs);
  a.starts.insert(0, 0);
  a.stops.insert(0, in[0].shape()[0]);
  a.steps.insert(0, 1);
  run(p, a, {in[0]}, out, out_axes);
}

// The per-example input broadcasts from the right; its batch axis must stay in front.
void broadcast_to(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int>,
                  std::vector<Tensor>& out, std::vector<int>& out_axes) {
  prims::BroadcastAttrs a = *static_cast<const prims::BroadcastAttrs*>(attrs);
  const Tensor x = lift(in[0], static_cast<int64_t>(a.shape.size()));
  a.shape.insert(0, x.shape()[0]);
  run(p, a, {x}, out, out_axes);
}

void diagonal(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int>,
              std::vector<Tensor>& out, std::vector<int>& out_axes) {
  prims::DiagonalAttrs a = *static_cast<const prims::DiagonalAttrs*>(attrs);
  a.axis1 += 1;
  a.axis2 += 1;
  run(p, a, {in[0]}, out, out_axes);
}

void concat(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
            std::vector<Tensor>& out, std::vector<int>& out_axes) {
  prims::ConcatAttrs a = *static_cast<const prims::ConcatAttrs*>(attrs);
  a.axis += 1;
  const int64_t batch = batch_size(in, in_axes);
  std::vector<Tensor> args;
  for (size_t i = 0; i < in.size(); ++i) args.push_back(batched(in[i], in_axes[i], batch));
  run(p, a, std::move(args), out, out_axes);
}

void pad(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int>,
         std::vector<Tensor>& out, std::vector<int>& out_axes) {
  prims::PadAttrs a = *static_cast<const prims::PadAttrs*>(attrs);
  a.before.insert(0, 0);
  a.after.insert(0, 0);
  run(p, a, {in[0]}, out, out_axes);
}

void flip(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int>,
          std::vector<Tensor>& out, std::vector<int>& out_axes) {
  prims::FlipAttrs a = *static_cast<const prims::FlipAttrs*>(attrs);
  a.axes = shifted(a.axes);
  run(p, a, {in[0]}, out, out_axes);
}

void roll(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int>,
          std::vector<Tensor>& out, std::vector<int>& out_axes) {
  prims::RollAttrs a = *static_cast<const prims::RollAttrs*>(attrs);
  a.shifts.insert(0, 0);
  run(p, a, {in[0]}, out, out_axes);
}

// gather(x, index) and scatter(x, index, src): every operand needs the batch axis (the index
// picks along `axis` within its own lane).
template <class Attrs>
void gather_scatter(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
                    std::vector<Tensor>& out, std::vector<int>& out_axes) {
  Attrs a = *static_cast<const Attrs*>(attrs);
  a.axis += 1;
  const int64_t batch = batch_size(in, in_axes);
  std::vector<Tensor> args;
  for (size_t i = 0; i < in.size(); ++i) args.push_back(batched(in[i], in_axes[i], batch));
  run(p, a, std::move(args), out, out_axes);
}

// embedding(weight (V, D), indices): with a shared table the indices' leading batch axis is one
// more index dim. A batched table (B, V, D) becomes one (B * V, D) table and lane b's indices
// are offset by b * V, so it is still one gather (whose vjp is one scatter-add).
void embedding(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
               std::vector<Tensor>& out, std::vector<int>& out_axes) {
  if (in_axes[0] < 0) return leading_dims(p, attrs, in, in_axes, out, out_axes);
  const int64_t batch = in[0].shape()[0], V = in[0].shape()[1];
  const Tensor idx = batched(in[1], in_axes[1], batch);
  Shape lane{batch};
  for (int64_t d = 1; d < idx.dim(); ++d) lane.push_back(1);
  const Tensor offset = ops::reshape(ops::arange(0, batch * V, V), lane);
  out = call(p, attrs, std::vector<Tensor>{fold(in[0]), idx + offset});
  all_batched(out, out_axes);
}

// A lane's shape is the batched shape without the batch axis, the same for every lane.
void shape_of(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
              std::vector<Tensor>& out, std::vector<int>& out_axes) {
  out = call(p, attrs, in);  // (the batch axis is in front: vmap's canonical form)
  out[0] = ops::slice(out[0], 0, 1, in[0].dim());
  out_axes.assign(1, kNotBatched);
}

// A batched nonzero: its count could differ per lane, and a size is one per graph.
void nonzero(const Primitive&, const void*, std::span<const Tensor>, std::span<const int>, std::vector<Tensor>&,
             std::vector<int>&) {
  throw Error("[vmap] nonzero: the count of non-zero elements may differ per lane, and a size is one per graph; "
              "call nonzero outside vmap, or loop over the batch");
}

// The sizes are shared by every lane (a shape is one per graph); x keeps its batch axis.
void bind_sizes(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
                std::vector<Tensor>& out, std::vector<int>& out_axes) {
  SPORE_CHECK(in_axes[1] < 0, "[vmap] bind_sizes: the sizes differ per lane (they are batched); a shape read from "
              "values must be the same for every lane, so move the op out of vmap or loop over the batch");
  out = call(p, attrs, in);
  out_axes.assign(1, in_axes[0]);
}

}  // namespace

void install_shape_vmap_rules() {
  def_vmap(prims::reshape_primitive(), &reshape);
  def_vmap(prims::permute_primitive(), &permute);
  def_vmap(prims::slice_primitive(), &slice);
  def_vmap(prims::broadcast_to_primitive(), &broadcast_to);
  def_vmap(prims::diagonal_primitive(), &diagonal);
  def_vmap(prims::concat_primitive(), &concat);
  def_vmap(prims::pad_primitive(), &pad);
  def_vmap(prims::flip_primitive(), &flip);
  def_vmap(prims::roll_primitive(), &roll);
  def_vmap(prims::gather_primitive(), &gather_scatter<prims::GatherAttrs>);
  def_vmap(prims::scatter_primitive(), &gather_scatter<prims::ScatterAttrs>);
  def_vmap("tri", &leading_dims);
  def_vmap("one_hot", &leading_dims);
  def_vmap("embedding", &embedding);
  def_vmap("bind_sizes", &bind_sizes);
  def_vmap("shape_of", &shape_of);
  def_vmap("nonzero", &nonzero);
}

}  // namespace spore::transforms::vmap_rules
