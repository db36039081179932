// SPDX-License-Identifier: Apache-2.0
#include "runtime/profile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace spore::runtime::profile {
namespace {

struct Entry {
  int64_t calls = 0;
  int64_t ns = 0;
};

// Steps are grouped by what they run (primitive, kernel, input shapes), so the same op at the
// same shapes in several plans, or several times in one, adds up.
class Table {
 public:
  void add(std::string key, int64_t ns) {
    std::lock_guard<std::mutex> lock(mu_);
    Entry& e = rows_[std::move(key)];
    ++e.calls;
    e.ns += ns;
  }
  ~Table() { print(); }

 private:
  void print() {
    std::vector<std::pair<std::string, Entry>> rows(rows_.begin(), rows_.end());
    if (rows.empty()) return;
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
    int64_t total = 0;
    for (const auto& r : rows) total += r.second.ns;
    std::fprintf(stderr, "SPORE_PROFILE=plan: %.3f ms in plan steps\n%9s %6s %9s %10s  %s\n", total * 1e-6, "total_ms",
                 "share", "calls", "us/call", "primitive [kernel] inputs");
    for (const auto& [key, e] : rows)
      std::fprintf(stderr, "%9.3f %5.1f%% %9lld %10.2f  %s\n", e.ns * 1e-6, 100.0 * e.ns / std::max<int64_t>(total, 1),
                   static_cast<long long>(e.calls), e.ns * 1e-3 / std::max<int64_t>(e.calls, 1), key.c_str());
  }

  std::mutex mu_;
  std::map<std::string, Entry> rows_;
};

Table& table() {
  static Table t;  // printed when the process exits
  return t;
}

thread_local const char* t_variant = nullptr;

std::string step_key(const Plan& plan, const Step& st, const char* variant) {
  std::string key = st.prim->name;
  key += " [";
  key += variant ? variant : st.kernel ? st.kernel->name : (st.prim->eager ? "control-flow" : "view-copy");
  key += "]";
  for (int32_t s : st.in) {
    const Slot& sl = plan.slots[static_cast<size_t>(s)];
    key += " ";
    key += dtype_name(sl.dtype);
    key += shape_str(sl.shape);
  }
  return key;
}

}  // namespace

bool plan_enabled() {
  static const bool on = [] {
    const char* s = std::getenv("SPORE_PROFILE");
    if (s == nullptr || std::strstr(s, "plan") == nullptr) return false;
    table();  // constructed before any caller's statics: printed after them
    return true;
  }();
  return on;
}

void record_step(const Plan& plan, size_t k, int64_t ns) {
  const char* variant = t_variant;
  t_variant = nullptr;
  table().add(step_key(plan, plan.steps[k], variant), ns);
}

void note_variant(const char* name) { t_variant = name; }

const char* noted_variant() { return t_variant; }

}  // namespace spore::runtime::profile
