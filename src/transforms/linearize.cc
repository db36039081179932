// SPDX-License-Identifier: Apache-2.0
#include "transforms/linearize.h"

#include <unordered_map>

#include "autodiff/tape.h"
#include "runtime/dispatch.h"
#include "spore/error.h"
#include "transforms/control_flow.h"
#include "transforms/interpreter.h"

namespace spore::transforms {
namespace {

// Where the backward finds one saved tensor of the tape (in map_saved's order).
struct Slot {
  enum Kind : uint8_t { Input, Output, Residual, Literal } kind;
  size_t index = 0;
};

struct State {
  autodiff::Tape tape;
  std::vector<int64_t> wrt_ids, out_ids;
  std::vector<TensorType> wrt_types;
  std::vector<Slot> slots;
};

}  // namespace

Linearized linearize(const ir::Graph& g, std::span<const TensorType> in, std::span<const int> wrt,
                     const std::vector<bool>& keep_in, const std::vector<bool>& keep_out) {
  auto s = std::make_shared<State>();
  Linearized lin;
  for (int i : wrt) s->wrt_types.push_back(in[static_cast<size_t>(i)]);
  lin.fwd = trace_graph(g.name() + "_fwd", in, [&](std::span<const Tensor> x) {
    std::vector<Tensor> outs;
    {
      autodiff::FrameGuard open(&s->tape);
      // The inputs themselves (no aliases), so a saved input is recognised by identity.
      for (int i : wrt) s->wrt_ids.push_back(s->tape.track_in_place(x[static_cast<size_t>(i)]));
      outs = interpret(g, x);
      for (const Tensor& o : outs) s->out_ids.push_back(s->tape.id_of(o));
    }
    std::unordered_map<const void*, size_t> seen;  // one residual per tensor saved several times
    std::vector<Tensor> residuals;
    s->tape.map_saved([&](const Tensor& t) {
      if (t.device().type != DeviceType::Meta) {  // a literal: the backward trace makes it a constant again
        s->slots.push_back({Slot::Literal});
        return t;
      }
      for (size_t i = 0; i < x.size(); ++i)
        if (keep_in[i] && t.is_same(x[i])) {
          s->slots.push_back({Slot::Input, i});
          return t;
        }
      for (size_t j = 0; j < outs.size(); ++j)
        if (keep_out[j] && t.is_same(outs[j])) {
          s->slots.push_back({Slot::Output, j});
          return t;
        }
      auto [it, added] = seen.try_emplace(t.impl(), residuals.size());
      if (added) {
        residuals.push_back(t);
        lin.residual_types.push_back(runtime::type_of(t));
      }
      s->slots.push_back({Slot::Residual, it->second});
      return t;
    });
    outs.insert(outs.end(), residuals.begin(), residuals.end());
    return outs;
  });
  lin.backward = [s](std::span<const Tensor> inputs, std::span<const Tensor> outputs, std::span<const Tensor> residuals,
                     std::span<const Tensor> cts) {
    size_t k = 0;
    s->tape.map_saved([&](const Tensor& t) {
      const Slot& sl = s->slots[k++];
      switch (sl.kind) {
        case Slot::Input:
          SPORE_ASSERT(inputs[sl.index].defined(), "linearize: the backward needs input ", sl.index);
          return inputs[sl.index];
        case Slot::Output:
          SPORE_ASSERT(outputs[sl.index].defined(), "linearize: the backward needs output ", sl.index);
          return outputs[sl.index];
        case Slot::Residual:
          return residuals[sl.index];
        case Slot::Literal:
          break;
      }
      return t;
    });
    SPORE_ASSERT(k == s->slots.size(), "linearize: the tape changed between forward and backward");
    return s->tape.backward(s->out_ids, cts, s->wrt_ids, s->wrt_types, false);
  };
  return lin;
}

}  // namespace spore::transforms
