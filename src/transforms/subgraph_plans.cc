// SPDX-License-Identifier: Apache-2.0
#include "transforms/subgraph_plans.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "runtime/plan.h"
#include "spore/error.h"
#include "spore/threading.h"
#include "transforms/interpreter.h"
#include "transforms/plan_lowerer.h"

namespace spore::transforms {
namespace {

struct Entry {
  std::weak_ptr<const ir::Graph> graph;  // the key holds its address: valid while it lives
  std::shared_ptr<runtime::Plan> plan;   // null: the lowering refused it (interpreted)
};

bool log_jit() {
  static const bool on = [] {
    const char* v = std::getenv("SPORE_LOG");
    return v && std::string(v).find("jit") != std::string::npos;
  }();
  return on;
}

std::mutex g_mu;
std::map<std::string, Entry> g_plans;
std::atomic<int64_t> g_lowered{0};

// The sub-graph's address, the thread count (prepared library kernels fix theirs, as a jit
// plan's do) and the inputs' dtypes and shapes.
std::string key_of(const ir::Graph* g, std::span<const Tensor> inputs) {
  std::string k = std::to_string(reinterpret_cast<uintptr_t>(g)) + '/' + std::to_string(num_threads());
  for (const Tensor& t : inputs) {
    k += '|';
    k += std::to_string(static_cast<int>(t.dtype()));
    for (int64_t d : t.shape()) k += ',' + std::to_string(d);
  }
  return k;
}

std::shared_ptr<runtime::Plan> plan_for(const ir::GraphPtr& g, std::span<const Tensor> inputs) {
  const PlanLowerer lower = plan_lowerer();
  if (lower == nullptr) return nullptr;
  const std::string key = key_of(g.get(), inputs);
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (auto it = g_plans.find(key); it != g_plans.end() && !it->second.graph.expired()) return it->second.plan;
  }
  std::shared_ptr<runtime::Plan> plan;
  try {
    plan = lower(*g, inputs, nullptr);
    g_lowered.fetch_add(1);
  } catch (const Error& e) {
    plan = nullptr;  // a value of run-time shape, an op without a kernel: interpreted
    if (log_jit())
      std::fprintf(stderr, "[jit] sub-graph @%s is interpreted inside its plan: %s\n", g->name().c_str(), e.what());
  }
  std::lock_guard<std::mutex> lock(g_mu);
  // The plans of sub-graphs no jit function holds any more go (their addresses may be reused).
  std::erase_if(g_plans, [](const auto& e) { return e.second.graph.expired(); });
  return g_plans.insert_or_assign(key, Entry{g, plan}).first->second.plan;
}

// SPORE_SUBGRAPH_PLANS=0 interprets every sub-graph (A/B measurements, a safety valve).
bool enabled() {
  static const bool on = [] {
    const char* e = std::getenv("SPORE_SUBGRAPH_PLANS");
    return !(e && std::string(e) == "0");
  }();
  return on;
}

}  // namespace

std::vector<Tensor> run_subgraph(const ir::GraphPtr& g, std::span<const Tensor> inputs) {
  if (runtime::tls_plan_control_flow > 0 && enabled())
    if (auto plan = plan_for(g, inputs)) return runtime::run(*plan, inputs);
  return interpret(*g, inputs);
}

int64_t subgraph_plans_lowered() { return g_lowered.load(); }

}  // namespace spore::transforms
