// SPDX-License-Identifier: Apache-2.0
#include "train/resume_state.h"

#include <cmath>
#include <map>
#include <set>

#include "spore/error.h"
#include "spore/ops.h"

namespace spore::train {
namespace {

constexpr const char* kCallbackPrefix = "callback.";
constexpr const char* kProgressPrefix = "epoch_progress.";

// "callback.<name>.", a repeated name numbered in list order, so a resumed run that passes the
// same list finds each callback's own entries.
std::vector<std::pair<Callback*, std::string>> state_prefixes(const std::vector<Callback*>& callbacks) {
  std::vector<std::pair<Callback*, std::string>> out;
  std::map<std::string, int> seen;
  std::set<std::string> taken;
  for (Callback* cb : callbacks) {
    const std::string name = cb->state_name();
    if (name.empty()) continue;
    // A '.' would let one callback's prefix match inside another's entries.
    SPORE_CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
                    std::string::npos,
                "[Model::fit] callback state name '", name,
                "' may hold only letters, digits, '_' and '-'; rename it in the callback's state_name()");
    const int k = seen[name]++;
    std::string prefix = kCallbackPrefix;
    prefix += name;
    if (k) {
      prefix += '_';
      prefix += std::to_string(k);
    }
    prefix += '.';
    // "early_stopping_1" named by a user collides with the second EarlyStopping's number.
    SPORE_CHECK(taken.insert(prefix).second, "[Model::fit] two callbacks save their state under '", prefix,
                "' (a state name that equals another's numbered name, e.g. early_stopping_1); give one of them "
                "another state_name()");
    out.emplace_back(cb, std::move(prefix));
  }
  return out;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

void save_callback_states(const std::vector<Callback*>& callbacks, Checkpoint& c) {
  for (auto& [cb, prefix] : state_prefixes(callbacks)) cb->save_state(c, prefix);
}

void load_callback_states(const std::vector<Callback*>& callbacks, const Checkpoint& c) {
  const auto prefixes = state_prefixes(callbacks);
  // Every check before any load: a refusal by a later callback must not leave earlier ones
  // holding the refused file's state.
  for (auto& [cb, prefix] : prefixes)
    if (c.has_prefix(prefix)) cb->check_state(c, prefix);
  for (auto& [cb, prefix] : prefixes)
    if (c.has_prefix(prefix)) cb->load_state(c, prefix);
}

void save_epoch_progress(const EpochProgress& p, Checkpoint& c) {
  c.set_double(std::string(kProgressPrefix) + "loss_sum", p.loss_sum);
  c.ints[std::string(kProgressPrefix) + "loss_count"] = p.loss_count;
  for (const auto& m : p.metrics) {
    const std::vector<double> s = m->state();
    c.tensors.emplace_back(kProgressPrefix + ("metric." + m->name()), ops::from_vector(s));
  }
}

void load_epoch_progress(EpochProgress& p, const Checkpoint& c) {
  if (!c.has_prefix(kProgressPrefix)) return;
  p.loss_sum = c.get_double(std::string(kProgressPrefix) + "loss_sum");
  p.loss_count = c.get_int(std::string(kProgressPrefix) + "loss_count");
  // The sum may be inf or NaN: a diverged run is still resumed exactly as it would have gone on.
  SPORE_CHECK(p.loss_count >= 0, "[Model::fit] the checkpoint's epoch_progress counts ", p.loss_count,
              " samples; a count >= 0 is expected, the file is corrupted");
  for (auto& m : p.metrics) {
    const std::string key = kProgressPrefix + ("metric." + m->name());
    bool found = false;
    for (const auto& [n, t] : c.tensors) {
      if (n != key) continue;
      SPORE_CHECK(t.dim() == 1 && t.dtype() == DType::Float64, "[Model::fit] checkpoint entry '", key, "' is ",
                  dtype_name(t.dtype()), " ", shape_str(t.shape()), ", not a float64 vector; the file is corrupted");
      m->load_state(t.contiguous().to_vector<double>());
      found = true;
    }
    if (!found) m->reset();
  }
}

Checkpoint fit_entries(const Checkpoint& c) {
  auto mine = [](const std::string& n) { return starts_with(n, kCallbackPrefix) || starts_with(n, kProgressPrefix); };
  Checkpoint out;
  for (const auto& [n, t] : c.tensors)
    if (mine(n)) out.tensors.emplace_back(n, t.clone());
  for (const auto& [n, v] : c.ints)
    if (mine(n)) out.ints.emplace(n, v);
  for (const auto& [n, v] : c.texts)
    if (mine(n)) out.texts.emplace(n, v);
  return out;
}

void append_entries(const Checkpoint& from, Checkpoint& to) {
  for (const auto& [n, t] : from.tensors) to.tensors.emplace_back(n, t.clone());
  to.ints.insert(from.ints.begin(), from.ints.end());
  to.texts.insert(from.texts.begin(), from.texts.end());
}

}  // namespace spore::train
