// SPDX-License-Identifier: Apache-2.0
#include "spore/train/callbacks.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <fstream>
#include <limits>
#include <sstream>

#include "spore/error.h"
#include "spore/train/model.h"

namespace spore::train {

// The metric's value (validation first), or nullopt when fit reports no such metric. A value may
// be NaN (a diverged run): it is never better than the best, so it counts as a bad epoch, as in
// PyTorch.
std::optional<double> monitored_value(const RunContext& c, const std::string& key) {
  if (auto it = c.eval_metrics.find(key); it != c.eval_metrics.end()) return it->second;
  if (auto it = c.train_metrics.find(key); it != c.train_metrics.end()) return it->second;
  return std::nullopt;
}

void LossMonitor::on_step_end(RunContext& c) {
  if (every_ > 0 && c.global_step % every_ == 0)
    std::fprintf(out_, "epoch %lld step %lld loss %.6f\n", static_cast<long long>(c.epoch + 1),
                 static_cast<long long>(c.global_step), c.loss);
}

ProgressBar::ProgressBar(std::FILE* out) : out_(out), tty_(::isatty(::fileno(out)) != 0) {}

void ProgressBar::on_epoch_begin(RunContext&) {
  last_decile_ = -1;
  last_draw_ = {};
}

void ProgressBar::draw(const RunContext& c, bool final) {
  const double rate = c.samples_per_second();
  std::ostringstream os;
  os << "epoch " << c.epoch + 1 << '/' << c.epochs << "  step " << c.step_in_epoch;
  if (c.steps_per_epoch > 0) os << '/' << c.steps_per_epoch;
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %.0f samples/s", rate);
  os << buf;
  if (!final && c.steps_per_epoch > 0 && c.step_in_epoch > 0) {
    const double eta = c.epoch_seconds / static_cast<double>(c.step_in_epoch) *
                       static_cast<double>(c.steps_per_epoch - c.step_in_epoch);
    std::snprintf(buf, sizeof buf, "  ETA %.1fs", eta);
    os << buf;
  }
  std::snprintf(buf, sizeof buf, "  loss %.4f", c.loss);
  os << buf;
  if (final) {
    std::snprintf(buf, sizeof buf, "  %.1fs", c.epoch_seconds);
    os << buf;
    for (const auto& [k, v] : c.train_metrics) os << "  " << k << ' ' << v;
    for (const auto& [k, v] : c.eval_metrics) os << "  val_" << k << ' ' << v;
  }
  if (tty_) std::fprintf(out_, "\r\033[K%s%s", os.str().c_str(), final ? "\n" : "");
  else std::fprintf(out_, "%s\n", os.str().c_str());
  std::fflush(out_);
}

void ProgressBar::on_step_end(RunContext& c) {
  if (tty_) {
    // Redraw at most ~10 times a second: drawing every step would cost more than small steps.
    auto now = std::chrono::steady_clock::now();
    if (now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    draw(c, false);
  } else if (c.steps_per_epoch > 0) {
    const int64_t decile = c.step_in_epoch * 10 / c.steps_per_epoch;
    if (decile != last_decile_ && decile < 10) {
      last_decile_ = decile;
      draw(c, false);
    }
  }
}

void ProgressBar::on_epoch_end(RunContext& c) { draw(c, true); }

namespace {
// Checkpoints in `dir` named ckpt-<step>.spore, by step.
std::vector<std::pair<long long, std::string>> checkpoints_in(const std::string& dir) {
  std::vector<std::pair<long long, std::string>> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("ckpt-", 0) != 0 || name.size() <= 11 || name.substr(name.size() - 6) != ".spore") continue;
    const std::string digits = name.substr(5, name.size() - 11);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 15) continue;
    out.emplace_back(std::stoll(digits), e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

CheckpointCallback::CheckpointCallback(std::string dir, int64_t every_steps, int64_t every_epochs, int keep,
                                       std::function<void(Checkpoint&)> decorate)
    : dir_(std::move(dir)), every_steps_(every_steps), every_epochs_(every_epochs), keep_(keep),
      decorate_(std::move(decorate)) {
  SPORE_CHECK(keep >= 1, "[CheckpointCallback] keep must be at least 1, got ", keep);
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  SPORE_CHECK(!ec, "[CheckpointCallback] cannot create the checkpoint directory ", dir_, ": ", ec.message());
}

void CheckpointCallback::save(RunContext& c) {
  const std::string path = (std::filesystem::path(dir_) / ("ckpt-" + std::to_string(c.global_step) + ".spore")).string();
  // Named by the step: a resumed run that saves at the same step replaces the file atomically.
  Checkpoint ck = c.model->checkpoint();
  if (decorate_) decorate_(ck);
  save_checkpoint(path, ck);
  last_saved_ = path;
  auto all = checkpoints_in(dir_);
  for (size_t i = 0; i + static_cast<size_t>(keep_) < all.size(); ++i) {
    std::error_code ec;
    std::filesystem::remove(all[i].second, ec);
  }
}

void CheckpointCallback::on_train_begin(RunContext&) { save_at_epoch_end_ = false; }
void CheckpointCallback::on_step_end(RunContext& c) {
  if (every_steps_ <= 0 || c.global_step % every_steps_ != 0) return;
  // On an epoch's last step the position already reads (epoch + 1, 0) but the epoch's end
  // (validation, plateau and early-stopping decisions) has not run: a save now would resume
  // past an epoch end that never happened. It is taken at the epoch's end instead.
  if (c.steps_per_epoch >= 0 && c.step_in_epoch >= c.steps_per_epoch) save_at_epoch_end_ = true;
  else save(c);
}
void CheckpointCallback::on_epoch_end(RunContext& c) {
  const bool due = save_at_epoch_end_ || (every_epochs_ > 0 && (c.epoch + 1) % every_epochs_ == 0);
  save_at_epoch_end_ = false;
  if (due) save(c);
}

std::string CheckpointCallback::latest(const std::string& dir) {
  auto all = checkpoints_in(dir);
  return all.empty() ? std::string() : all.back().second;
}

EarlyStopping::EarlyStopping(std::string monitor, int64_t patience, double min_delta, bool maximize)
    : monitor_(std::move(monitor)), patience_(patience), min_delta_(min_delta), maximize_(maximize),
      best_(maximize ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity()) {
  SPORE_CHECK(patience >= 0, "[EarlyStopping] patience must be >= 0, got ", patience);
}

void EarlyStopping::on_epoch_end(RunContext& c) {
  if (!c.epoch_complete) return;  // partial metrics; the resumed run decides on the whole epoch
  const std::optional<double> m = monitored_value(c, monitor_);
  SPORE_CHECK(m.has_value(), "[EarlyStopping] monitors '", monitor_,
              "', which fit does not report; use a metric name such as loss or accuracy");
  const double v = *m;
  const bool better = maximize_ ? v > best_ + min_delta_ : v < best_ - min_delta_;
  if (better) {
    best_ = v;
    bad_epochs_ = 0;
  } else if (++bad_epochs_ > patience_) {
    c.stop = true;
    stopped_epoch_ = c.epoch;
  }
}

void LROnPlateau::on_epoch_end(RunContext& c) {
  if (!c.epoch_complete) return;  // partial metrics; the resumed run decides on the whole epoch
  const std::optional<double> m = monitored_value(c, monitor_);
  SPORE_CHECK(m.has_value(), "[LROnPlateau] monitors '", monitor_,
              "', which fit does not report; use a metric name such as loss or accuracy");
  schedule_.step(*m);
}

namespace {
// A saved best value is only meaningful for the metric it was measured on.
void check_monitor(const char* who, const Checkpoint& c, const std::string& prefix, const std::string& monitor) {
  auto it = c.texts.find(prefix + "monitor");
  SPORE_CHECK(it != c.texts.end(), "[", who, "] the checkpoint's entries under '", prefix,
              "' lack 'monitor'; the file is incomplete");
  SPORE_CHECK(it->second == monitor, "[", who, "] the checkpoint's state monitors '", it->second,
              "' but this callback monitors '", monitor, "'; resume with the callbacks the saved run used");
}

// A best value is a measured metric or the +-infinity a fresh callback starts from, never NaN.
void check_best(const char* who, const Checkpoint& c, const std::string& prefix) {
  const double best = c.get_double(prefix + "best");
  SPORE_CHECK(!std::isnan(best), "[", who, "] the checkpoint's '", prefix, "best' is NaN; the file is corrupted");
}

// Counters are non-negative: a negative one would make the callback wait more epochs or never.
void check_count(const char* who, const Checkpoint& c, const std::string& key) {
  auto it = c.ints.find(key);
  SPORE_CHECK(it != c.ints.end(), "[", who, "] the checkpoint lacks '", key, "'; the file is incomplete");
  SPORE_CHECK(it->second >= 0, "[", who, "] the checkpoint's '", key, "' is ", it->second,
              ", below 0; the file is corrupted");
}
}  // namespace

void LROnPlateau::save_state(Checkpoint& c, const std::string& prefix) const {
  const auto& st = schedule_.state();
  c.texts[prefix + "monitor"] = monitor_;
  c.set_double(prefix + "best", st.best);
  c.ints[prefix + "num_bad_steps"] = st.num_bad_steps;
  c.ints[prefix + "cooldown_counter"] = st.cooldown_counter;
  c.ints[prefix + "last_step"] = st.last_step;
  c.ints[prefix + "maximize"] = schedule_.options().maximize ? 1 : 0;
}

void LROnPlateau::check_state(const Checkpoint& c, const std::string& prefix) const {
  check_monitor("LROnPlateau", c, prefix, monitor_);
  check_best("LROnPlateau", c, prefix);
  // Older files lack 'maximize': only a file that says it is checked against this schedule.
  const bool maximize = schedule_.options().maximize;
  if (auto it = c.ints.find(prefix + "maximize"); it != c.ints.end())
    SPORE_CHECK((it->second != 0) == maximize, "[LROnPlateau] the checkpoint's state ", it->second ? "maximizes" : "minimizes",
                " '", monitor_, "' but this schedule ", maximize ? "maximizes" : "minimizes",
                " it; resume with the schedule options the saved run used");
  for (const char* k : {"num_bad_steps", "cooldown_counter", "last_step"}) check_count("LROnPlateau", c, prefix + k);
}

void LROnPlateau::load_state(const Checkpoint& c, const std::string& prefix) {
  check_state(c, prefix);
  optim::ReduceLROnPlateau::State st;
  st.best = c.get_double(prefix + "best");
  st.num_bad_steps = c.get_int(prefix + "num_bad_steps");
  st.cooldown_counter = c.get_int(prefix + "cooldown_counter");
  st.last_step = c.get_int(prefix + "last_step");
  schedule_.load_state(st);
}

void EarlyStopping::on_train_begin(RunContext& c) {
  if (stop_at_begin_) c.stop = true;
  stop_at_begin_ = false;
}

void EarlyStopping::save_state(Checkpoint& c, const std::string& prefix) const {
  c.texts[prefix + "monitor"] = monitor_;
  c.set_double(prefix + "best", best_);
  c.ints[prefix + "bad_epochs"] = bad_epochs_;
  c.ints[prefix + "stopped_epoch"] = stopped_epoch_;
  c.ints[prefix + "maximize"] = maximize_ ? 1 : 0;
}

void EarlyStopping::check_state(const Checkpoint& c, const std::string& prefix) const {
  check_monitor("EarlyStopping", c, prefix, monitor_);
  check_best("EarlyStopping", c, prefix);
  check_count("EarlyStopping", c, prefix + "bad_epochs");
  SPORE_CHECK(c.ints.count(prefix + "stopped_epoch") && c.get_int(prefix + "stopped_epoch") >= -1,
              "[EarlyStopping] the checkpoint's '", prefix, "stopped_epoch' is missing or below -1; the file is corrupted");
  // Older files lack 'maximize': only a file that says it is checked against this callback.
  if (auto it = c.ints.find(prefix + "maximize"); it != c.ints.end())
    SPORE_CHECK((it->second != 0) == maximize_, "[EarlyStopping] the checkpoint's state ",
                it->second ? "maximizes" : "minimizes", " '", monitor_, "' but this callback ",
                maximize_ ? "maximizes" : "minimizes", " it; resume with the callbacks the saved run used");
}

void EarlyStopping::load_state(const Checkpoint& c, const std::string& prefix) {
  check_state(c, prefix);
  const double best = c.get_double(prefix + "best");
  const int64_t bad = c.get_int(prefix + "bad_epochs"), stopped = c.get_int(prefix + "stopped_epoch");
  best_ = best;
  bad_epochs_ = bad;
  stopped_epoch_ = stopped;
  stop_at_begin_ = stopped >= 0;
}

MetricsLog::MetricsLog(std::string dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  SPORE_CHECK(!ec, "[MetricsLog] cannot create the log directory ", dir, ": ", ec.message());
  path_ = (std::filesystem::path(dir) / "metrics.jsonl").string();
}

namespace {
std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}
std::string json_metrics(const RunContext& c) {
  std::ostringstream os;
  os << "\"epoch\": " << c.epoch + 1 << ", \"step\": " << c.global_step << ", \"loss\": " << json_number(c.loss)
     << ", \"samples_per_second\": " << json_number(c.samples_per_second())
     << ", \"seconds\": " << json_number(c.epoch_seconds)
     << ", \"lr\": " << json_number(c.model ? c.model->optimizer().lr() : 0.0);
  for (const auto& [k, v] : c.train_metrics) os << ", \"train_" << k << "\": " << json_number(v);
  for (const auto& [k, v] : c.eval_metrics) os << ", \"eval_" << k << "\": " << json_number(v);
  return os.str();
}
}  // namespace

void MetricsLog::write(const std::string& line) {
  std::ofstream out(path_, std::ios::app);
  SPORE_CHECK(out.good(), "[MetricsLog] cannot append to ", path_);
  out << line << '\n';
}
// An epoch stopped part-way is logged with "complete": false, so a reader does not take its
// metrics (which cover only the batches run) for a whole epoch's.
void MetricsLog::on_epoch_end(RunContext& c) {
  write(std::string("{\"event\": \"epoch\", \"complete\": ") + (c.epoch_complete ? "true" : "false") + ", " +
        json_metrics(c) + "}");
}
void MetricsLog::on_train_end(RunContext& c) { write("{\"event\": \"end\", " + json_metrics(c) + "}"); }

}  // namespace spore::train
