// SPDX-License-Identifier: Apache-2.0
#include "passes/plan_layout.h"

#include <cstdlib>
#include <cstring>

#include "codegen/fused.h"

namespace spore::passes {
namespace {

using runtime::Plan;
using runtime::Slot;
using runtime::SlotKind;
using runtime::Step;

bool disabled() {
  const char* s = std::getenv("SPORE_PLAN_LAYOUT");
  return s && std::strcmp(s, "plain") == 0;
}

bool takes(const Plan& plan, const Step& st, int input) {
  if (st.kernel == nullptr || st.kernel->takes_channels_last == nullptr) return false;
  std::vector<TensorType> in;
  for (int32_t s : st.in) in.push_back(plan.slots[static_cast<size_t>(s)].type());
  return st.kernel->takes_channels_last(st.attrs.get(), in, input);
}

}  // namespace

void assign_layouts(Plan& plan, const std::vector<int64_t>& producer) {
  if (disabled()) return;
  // Slots some view reads: the view's strides were computed for row-major memory.
  std::vector<char> viewed(plan.slots.size(), 0);
  for (const Slot& s : plan.slots)
    if (s.kind == SlotKind::View) viewed[static_cast<size_t>(s.base)] = 1;
  // Who reads each slot: (step, input position).
  std::vector<std::vector<std::pair<size_t, int>>> readers(plan.slots.size());
  for (size_t k = 0; k < plan.steps.size(); ++k)
    for (size_t i = 0; i < plan.steps[k].in.size(); ++i)
      readers[static_cast<size_t>(plan.steps[k].in[i])].emplace_back(k, static_cast<int>(i));
  // Per producing step: its results of rank 3 or more (a fused group's several results share
  // one layout, so they turn channels-last together or not at all; batch_norm's statistics are
  // 1-D and stay as they are). `takes(step, -1)` asks the producer about those results.
  // Elementwise kernels (fused or not) and inference batch_norm compute in any layout, so they
  // only pass channels-last on: one turns its results channels-last only when a full-size
  // operand already is (a chain that starts at a conv or a pool), and reads a channels-last
  // operand only when its results will follow, i.e. they qualify themselves (decided from the
  // last step back, so a follower's readers are settled first); else the conv writes row-major
  // itself, with oneDNN's reorder, rather than the elementwise kernel reading across the
  // channels, and no kernel copies between layouts.
  auto agnostic = [](const Step& st) {
    if (st.prim->name == "batch_norm") return true;  // inference only: training does not take it
    return st.prim->name == codegen::kFusedOp || st.prim->fusion == FusionClass::Elementwise;
  };
  std::vector<char> can_follow(plan.steps.size(), 0);
  auto qualifies = [&](size_t v) {
    const Slot& sl = plan.slots[v];
    if (sl.kind != SlotKind::Arena || viewed[v] || readers[v].empty()) return false;
    for (const auto& [k, i] : readers[v]) {
      const Step& r = plan.steps[k];
      if (!takes(plan, r, i) || (agnostic(r) && !can_follow[k])) return false;
    }
    return true;
  };
  auto results = [&](const Step& st) {
    std::vector<size_t> outs;
    for (int32_t s : st.out)
      if (plan.slots[static_cast<size_t>(s)].shape.size() >= 3) outs.push_back(static_cast<size_t>(s));
    return outs;
  };
  // Whether step k's results of rank 3 or more can all turn channels-last.
  auto all_qualify = [&](size_t k, const std::vector<size_t>& outs) {
    if (outs.empty() || !takes(plan, plan.steps[k], -1)) return false;
    for (size_t v : outs)
      if (producer[v] != static_cast<int64_t>(k) || !qualifies(v)) return false;
    return true;
  };
  for (size_t k = plan.steps.size(); k-- > 0;)
    if (agnostic(plan.steps[k])) can_follow[k] = all_qualify(k, results(plan.steps[k]));
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const Step& made = plan.steps[k];
    const std::vector<size_t> outs = results(made);
    if (outs.empty()) continue;
    bool ok;
    if (agnostic(made)) {
      ok = false;  // fed: a full-size operand is channels-last already
      for (int32_t s : made.in) {
        const Slot& in = plan.slots[static_cast<size_t>(s)];
        ok = ok || (in.channels_last && in.shape == plan.slots[outs[0]].shape);
      }
      ok = ok && can_follow[k];
    } else {
      ok = all_qualify(k, outs);
    }
    if (!ok) continue;
    for (size_t v : outs) {
      Slot& s = plan.slots[v];
      s.channels_last = true;
      s.strides = channels_last_strides(s.shape);
    }
  }
}

}  // namespace spore::passes
