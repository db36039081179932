// SPDX-License-Identifier: Apache-2.0
#pragma once
// The PyNative reverse-mode tape (shared/ARCHITECTURE.md, "PyNative"): per recorded op, the
// primitive, its attributes, the value ids of its inputs and outputs, their types and only the
// residuals its vjp declares. backward() walks it in reverse calling vjp rules through the one
// dispatch (so outer frames record the backward: grad of grad), frees residuals as it goes when
// asked to, and checks that no saved tensor was modified in place since it was saved.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/frames.h"

namespace spore::autodiff {

class Tape final : public Frame {
 public:
  Tape() : Frame(Kind::Tape) {}

  /// Starts tracking `t` (a fresh alias) as a new value; returns the tensor to hand to f.
  Tensor track(const Tensor& t);
  /// Starts tracking `t` itself (not an alias) as a new value; the caller removes the entry
  /// (remove_entry) when the tape closes. For tensors a function captures rather than receives.
  int64_t track_in_place(const Tensor& t) {
    add_entry(t, {uid(), next_id_, Tensor()});
    return next_id_++;
  }
  /// The value id `t` has on this tape, or -1.
  int64_t id_of(const Tensor& t) const;

  void record(int depth, const Primitive& p, const void* attrs, std::span<const Tensor> in,
              std::span<const Tensor> out) override;

  /// Cotangents of `wanted` value ids given cotangents of `roots` (undefined = zero). With
  /// `consume`, residuals are freed as their node is processed and the tape is empty afterwards.
  /// `wanted_types` gives the zero for a value that received no cotangent.
  std::vector<Tensor> backward(std::span<const int64_t> roots, std::span<const Tensor> root_cts,
                               std::span<const int64_t> wanted, std::span<const TensorType> wanted_types,
                               bool consume);

  /// Replaces every saved tensor by f(saved), in recording order (nodes, then inputs before
  /// outputs). Control-flow linearization (src/transforms/linearize.cc) uses it to list the
  /// residuals of a traced body and to rebind them to a backward trace's inputs.
  void map_saved(const std::function<Tensor(const Tensor&)>& f);

  size_t num_nodes() const { return nodes_.size(); }
  /// Names of the recorded primitives, in order (for tests and coverage reports).
  std::vector<std::string> recorded_primitives() const {
    std::vector<std::string> names;
    for (const auto& n : nodes_) names.push_back(n.prim->name);
    return names;
  }

 private:
  struct Node {
    const Primitive* prim;
    std::shared_ptr<const void> attrs;
    std::vector<int64_t> in_ids;   // -1: not tracked by this tape
    std::vector<int64_t> out_ids;
    std::vector<TensorType> types;  // inputs then outputs
    std::vector<Tensor> saved;      // inputs then outputs; undefined where not declared
    std::vector<uint64_t> versions;
  };
  std::vector<Node> nodes_;
  int64_t next_id_ = 0;
};

}  // namespace spore::autodiff
