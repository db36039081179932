// SPDX-License-Identifier: Apache-2.0
// spore train / eval / predict.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>

#include <spore/data/sources.h>
#include <spore/io/compare.h>
#include <spore/models/classic.h>
#include <spore/optim/optim.h>
#include <spore/spore.h>
#include <spore/train/dataset_batches.h>
#include <spore/train/model.h>

#include "spore/commands.h"
#include "spore/datasets.h"
#include "spore/flags.h"

namespace spore::cli {
namespace {

namespace fs = std::filesystem;

std::vector<FlagSpec> data_flags() {
  return {{"dataset", true,
           "fashion-mnist, a directory of MNIST-format IDX files, or an image folder (DIR/train/<class>/*.png|jpg "
           "and DIR/test/<class>/...)",
           "fashion-mnist"},
          {"batch-size", true, "samples per batch", "64"},
          {"limit", true, "use only N samples of each split (IDX: the first N; an image folder: a fixed random subset)", "-1"},
          {"workers", true, "data pipeline worker threads", "1"},
          {"mode", true, "graph (compiled) or pynative (eager)", "graph"},
          {"json", false, "print one JSON object as the last line of stdout", ""},
          {"help", false, "show this help", ""}};
}

bool wants_help(Flags& f, const char* usage) {
  if (!f.has("help")) return false;
  std::printf("%s\nflags:\n%s", usage, f.help().c_str());
  return true;
}

DataOptions data_options(const Flags& f, uint64_t seed) {
  DataOptions o;
  o.dataset = f.str("dataset");
  o.batch_size = f.integer("batch-size", 1, 1 << 20);
  o.limit = f.integer("limit", -1, int64_t{1} << 40);
  o.workers = static_cast<int>(f.integer("workers", 1, 64));
  o.seed = seed;
  return o;
}

// eval and predict prepare the data as the run that wrote the checkpoint did.
void data_from_checkpoint(DataOptions& o, const train::Checkpoint& c) {
  auto get = [&c](const char* k, int64_t fallback) { return c.ints.count(k) ? c.get_int(k) : fallback; };
  o.image_size = get("image_size", 28);  // files from before image folders were 28 x 28 gray
  o.channels = static_cast<int>(get("in_channels", 1));
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : "\n") + x;
  return s;
}

// A joined() list on one line of a message; `empty` when there is none.
std::string on_one_line(std::string v, const char* empty) {
  for (char& ch : v)
    if (ch == '\n') ch = ',';
  return v.empty() ? std::string(empty) : v;
}

// An image folder's classes must be the checkpoint's, in the same order, or labels mean other things.
// Checked before the data is prepared with the checkpoint's channels, so a checkpoint of RGB
// folder images on gray IDX data reports the classes, the first thing that differs.
void check_classes(DataOptions o, const train::Checkpoint& c, const std::string& path) {
  o.channels = 0;
  const DataInfo info = describe(o);
  auto it = c.texts.find("classes");
  const std::string saved = it == c.texts.end() ? "" : it->second;
  const std::string given = info.image_folder ? joined(info.classes) : "";
  if (saved == given) return;
  const char* idx = "the 10 IDX classes";
  throw Error("--dataset's classes (" + on_one_line(given, idx) + ") are not the ones " + path + " was trained on (" +
              on_one_line(saved, idx) + "); use data with the same class folders");
}

void set_mode(const Flags& f) {
  set_context(f.choice("mode", {"graph", "pynative"}) == "graph" ? Mode::Graph : Mode::PyNative);
}

std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& name, std::vector<Tensor> params, double lr,
                                                 double momentum, double weight_decay) {
  if (name == "sgd") return std::make_unique<optim::SGD>(std::move(params), optim::SGDOptions{.lr = lr, .momentum = momentum, .weight_decay = weight_decay});
  if (name == "adam") return std::make_unique<optim::Adam>(std::move(params), optim::AdamOptions{.lr = lr, .weight_decay = weight_decay});
  if (name == "adamw") return std::make_unique<optim::AdamW>(std::move(params), optim::AdamWOptions{.lr = lr, .weight_decay = weight_decay});
  if (name == "rmsprop") return std::make_unique<optim::RMSProp>(std::move(params), optim::RMSPropOptions{.lr = lr, .weight_decay = weight_decay, .momentum = momentum});
  if (name == "adagrad") return std::make_unique<optim::Adagrad>(std::move(params), optim::AdagradOptions{.lr = lr, .weight_decay = weight_decay});
  return std::make_unique<optim::LAMB>(std::move(params), optim::LAMBOptions{.lr = lr, .weight_decay = weight_decay});
}

Tensor cross_entropy_loss(const Tensor& out, const Tensor& y) { return ops::cross_entropy(out, y); }

// A checkpoint names the zoo model it holds, so eval and predict rebuild the same network.
struct Restored {
  std::unique_ptr<nn::UnaryCell> net;
  std::string model_name;
};
Restored restore_network(const train::Checkpoint& c, const std::string& path) {
  auto it = c.texts.find("zoo_model");
  SPORE_CHECK(it != c.texts.end(), path, " was not written by `spore train` (it names no zoo model)");
  Restored r;
  r.model_name = it->second;
  const int64_t image_size = c.ints.count("image_size") ? c.get_int("image_size") : 28;
  if (auto cl = c.texts.find("classes"); cl != c.texts.end() && !cl->second.empty()) {
    const int64_t names = 1 + std::count(cl->second.begin(), cl->second.end(), '\n');
    SPORE_CHECK(names == c.get_int("num_classes"), path, " names ", names, " classes but holds a model for ",
                c.get_int("num_classes"), "; the file was edited or is corrupted");
  }
  r.net = models::create(r.model_name, c.get_int("num_classes"), c.get_int("in_channels"), image_size);
  r.net->load_state_dict(c.with_prefix("model."));
  r.net->eval();
  return r;
}

// JSON string literals (paths may hold quotes or backslashes): the model tools' one.
using io::json_string;

std::string json_double(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

int train_command(const std::vector<std::string>& args) {
  auto specs = data_flags();
  specs.insert(specs.begin(),
               {{"model", true, "a zoo model: mlp, lenet, resnet18, resnet34, resnet50, mobilenet_v2, vit_tiny", "lenet"},
                {"epochs", true, "epochs to train", "3"},
                {"lr", true, "learning rate", "0.001"},
                {"optimizer", true, "sgd, adam, adamw, rmsprop, adagrad or lamb", "adam"},
                {"momentum", true, "momentum (sgd, rmsprop)", "0.9"},
                {"weight-decay", true, "weight decay", "0"},
                {"schedule", true,
                 "learning-rate schedule: none, cosine (per step, to 0 at the end) or onecycle (peak --lr, momentum "
                 "cycled)",
                 "none"},
                {"seed", true, "seed for initialization and shuffling", "0"},
                {"checkpoint-dir", true, "save a checkpoint there after every epoch and at the end", ""},
                {"checkpoint-every", true, "also save every N steps", "0"},
                {"resume", false, "continue from the newest checkpoint in --checkpoint-dir", ""},
                {"log-dir", true, "append per-epoch metrics as JSON lines to DIR/metrics.jsonl", ""},
                {"image-size", true, "resize images to SxS (lenet needs 28, vit_tiny a multiple of 4)", "28"},
                {"channels", true, "1 (gray) or 3 (RGB); 0: the data set's own (1 for IDX, 3 for image folders)", "0"},
                {"data-stats", false,
                 "print the training pipeline's per-stage time and queue depths to stderr at the end", ""}});
  Flags f("train", specs);
  f.parse(args);
  if (wants_help(f, "usage: spore train [flags]")) return 0;
  SPORE_CHECK(f.positional().empty(), "spore train takes no positional arguments (got '", f.positional()[0], "')");
  set_mode(f);
  const std::string model_name = f.str("model");
  const uint64_t seed = static_cast<uint64_t>(f.integer("seed", 0, int64_t{1} << 62));
  const int64_t epochs = f.integer("epochs", 1, 100000);
  const std::string ckpt_dir = f.str("checkpoint-dir");
  SPORE_CHECK(!f.has("resume") || !ckpt_dir.empty(), "spore train: --resume needs --checkpoint-dir");
  DataOptions dopt = data_options(f, seed);

  manual_seed(seed);
  dopt.image_size = f.integer("image-size", 1, 4096);
  dopt.channels = static_cast<int>(f.integer("channels", 0, 3));
  const DataInfo info = describe(dopt);
  std::unique_ptr<nn::UnaryCell> net = models::create(model_name, info.num_classes, info.channels, info.image_size);
  auto opt = make_optimizer(f.choice("optimizer", {"sgd", "adam", "adamw", "rmsprop", "adagrad", "lamb"}),
                            net->parameters(), f.number("lr", 0, 1e3), f.number("momentum", 0, 1),
                            f.number("weight-decay", 0, 1e3));
  train::Model model(*net, cross_entropy_loss, *opt);
  const std::shared_ptr<const data::Dataset> train_pipeline = train_batches(dopt);
  train::DatasetBatches train_data(train_pipeline);
  train::DatasetBatches test_data(test_batches(dopt));
  // The schedule sets the optimizer's learning-rate tensor, which the compiled step reads: no
  // retrace. It is built before a resume restores the (decayed) rate, so its base is --lr.
  std::unique_ptr<optim::LRScheduler> schedule;
  SPORE_CHECK(train_data.batches_per_epoch() != 0, "spore train: the training split has fewer samples than one batch "
              "of --batch-size ", dopt.batch_size, " (the last partial batch is dropped); lower --batch-size",
              dopt.limit > 0 ? " or raise --limit" : "", " or add data");
  const std::string schedule_name = f.choice("schedule", {"none", "cosine", "onecycle"});
  const int64_t total_steps = epochs * train_data.batches_per_epoch();
  if (schedule_name == "cosine") schedule = std::make_unique<optim::CosineAnnealingLR>(*opt, total_steps);
  if (schedule_name == "onecycle") {
    // --lr is the peak. Momentum (or beta1) cycles against the rate, as PyTorch's OneCycleLR does,
    // where the optimizer has one to cycle (not SGD or RMSProp run with --momentum 0).
    optim::OneCycleOptions oc;
    const auto& names = opt->scheduled_options();
    const bool beta1 = std::find(names.begin(), names.end(), "beta1") != names.end();
    const bool momentum = std::find(names.begin(), names.end(), "momentum") != names.end() && opt->option("momentum", 0) != 0;
    oc.cycle_momentum = beta1 || momentum;
    schedule = std::make_unique<optim::OneCycleLR>(*opt, std::vector<double>{f.number("lr", 0, 1e3)}, total_steps, oc);
  }

  // What a resumed run must share with the run that wrote the checkpoint, or it would read other
  // data in another order, or continue another optimization.
  const std::map<std::string, std::string> settings = {
      {"zoo_model", model_name},     {"dataset", f.str("dataset")},    {"seed", std::to_string(seed)},
      {"batch_size", f.str("batch-size")}, {"limit", f.str("limit")}, {"optimizer", f.str("optimizer")},
      {"lr", f.str("lr")},           {"schedule", schedule_name},     {"epochs_planned", std::to_string(epochs)},
      {"image_size", std::to_string(info.image_size)}, {"channels", std::to_string(info.channels)},
      {"classes", info.image_folder ? joined(info.classes) : ""}};
  // Files from before image folders lack the data's shape and classes: 28 x 28 gray IDX data.
  const std::map<std::string, std::string> old_defaults = {{"image_size", "28"}, {"channels", "1"}, {"classes", ""}};
  if (f.has("resume")) {
    const std::string latest = train::CheckpointCallback::latest(ckpt_dir);
    SPORE_CHECK(!latest.empty(), "spore train --resume: no checkpoint (ckpt-<step>.spore) in ", ckpt_dir);
    const train::Checkpoint c = train::load_checkpoint(latest);
    std::string mismatches;
    for (const auto& [k, v] : settings) {
      if (k == "epochs_planned" && schedule_name == "none") continue;  // only a schedule depends on the length
      auto it = c.texts.find(k);
      const auto fallback = old_defaults.find(k);
      const std::string saved =
          it != c.texts.end() ? it->second : fallback != old_defaults.end() ? fallback->second : "(none)";
      if (saved != v)
        mismatches += "\n  " + k + ": the checkpoint has " + on_one_line(saved, "(none)") + ", this run " +
                      on_one_line(v, "(none)");
    }
    SPORE_CHECK(mismatches.empty(), "spore train --resume: ", latest, " was written by a run with other settings; "
                "resume with the same flags or start a new --checkpoint-dir:", mismatches);
    model.restore(c);
    if (schedule) schedule->set_last_step(model.global_step());
    std::fprintf(stderr, "resuming from %s (step %lld)\n", latest.c_str(), static_cast<long long>(model.global_step()));
  }

  train::ProgressBar bar;
  std::vector<train::Callback*> callbacks = {&bar};
  struct ScheduleStep : train::Callback {
    optim::LRScheduler* s = nullptr;
    void on_step_end(train::RunContext&) override {
      if (s) s->step();
    }
  } schedule_step;
  schedule_step.s = schedule.get();
  callbacks.push_back(&schedule_step);
  // Checkpoints name the zoo model (so eval and predict rebuild it) and the run's settings.
  std::unique_ptr<train::CheckpointCallback> ckpt;
  if (!ckpt_dir.empty()) {
    ckpt = std::make_unique<train::CheckpointCallback>(
        ckpt_dir, f.integer("checkpoint-every", 0, int64_t{1} << 40), /*every_epochs=*/1, /*keep=*/3,
        [&settings, &info](train::Checkpoint& c) {
          for (const auto& [k, v] : settings) c.texts[k] = v;
          c.ints["num_classes"] = info.num_classes;
          c.ints["in_channels"] = info.channels;
          c.ints["image_size"] = info.image_size;
        });
    callbacks.push_back(ckpt.get());
  }
  std::unique_ptr<train::MetricsLog> log;
  if (!f.str("log-dir").empty()) {
    log = std::make_unique<train::MetricsLog>(f.str("log-dir"));
    callbacks.push_back(log.get());
  }
  train::FitResult r = model.fit(epochs, train_data, callbacks);
  // Where a slow step's time goes: each stage's own time, and how full the prefetch queue ran.
  if (f.has("data-stats")) std::fprintf(stderr, "training data pipeline:\n%s", train_pipeline->stats().c_str());
  auto test = model.evaluate(test_data);
  std::printf("model %s  mode %s  epochs %lld  train_loss %.4f  test_accuracy %.4f  test_loss %.4f  %.0f samples/s  %.1f s\n",
              model_name.c_str(), f.str("mode").c_str(), static_cast<long long>(epochs), r.train_loss,
              test.at("accuracy"), test.at("loss"), r.samples_per_second, r.seconds);
  std::string ckpt_json;
  if (ckpt && !ckpt->last_saved().empty()) {
    std::printf("checkpoint %s\n", ckpt->last_saved().c_str());
    ckpt_json = ", \"checkpoint\": " + json_string(ckpt->last_saved());
  }
  if (f.has("json"))
    std::printf("{\"model\": \"%s\", \"mode\": \"%s\", \"epochs\": %lld, \"steps\": %lld, \"train_loss\": %s, "
                "\"test_accuracy\": %s, \"test_loss\": %s, \"samples_per_second\": %s, \"seconds\": %s%s}\n",
                model_name.c_str(), f.str("mode").c_str(), static_cast<long long>(epochs),
                static_cast<long long>(r.steps), json_double(r.train_loss).c_str(),
                json_double(test.at("accuracy")).c_str(), json_double(test.at("loss")).c_str(),
                json_double(r.samples_per_second).c_str(), json_double(r.seconds).c_str(), ckpt_json.c_str());
  return 0;
}

int eval_command(const std::vector<std::string>& args) {
  auto specs = data_flags();
  specs.insert(specs.begin(), {{"checkpoint", true, "a checkpoint saved by spore train", ""},
                               {"confusion-matrix", false, "also print the confusion matrix (row: true class)", ""}});
  Flags f("eval", specs);
  f.parse(args);
  if (wants_help(f, "usage: spore eval --checkpoint FILE [flags]")) return 0;
  const std::string path = f.str("checkpoint").empty() && !f.positional().empty() ? f.positional()[0] : f.str("checkpoint");
  SPORE_CHECK(!path.empty(), "spore eval needs --checkpoint FILE");
  set_mode(f);
  const train::Checkpoint c = train::load_checkpoint(path);
  Restored r = restore_network(c, path);
  // Evaluation needs no optimizer state; a plain SGD over the weights satisfies Model.
  optim::SGD opt(r.net->parameters());
  train::Model model(*r.net, cross_entropy_loss, opt);
  DataOptions dopt = data_options(f, 0);
  data_from_checkpoint(dopt, c);
  check_classes(dopt, c, path);
  train::DatasetBatches test_data(test_batches(dopt));
  const int64_t classes = c.get_int("num_classes");
  train::ConfusionMatrix cm(classes);
  std::vector<train::Metric*> extra;
  if (f.has("confusion-matrix")) extra.push_back(&cm);
  auto m = model.evaluate(test_data, extra);
  std::printf("model %s  test_accuracy %.4f  test_loss %.4f\n", r.model_name.c_str(), m.at("accuracy"), m.at("loss"));
  std::string cm_json;
  if (f.has("confusion-matrix")) {
    std::printf("%s\n", cm.str().c_str());
    const std::vector<int64_t> v = cm.matrix().to_vector<int64_t>();
    cm_json = ", \"confusion_matrix\": [";
    for (int64_t i = 0; i < classes; ++i) {
      cm_json += i ? ", [" : "[";
      for (int64_t j = 0; j < classes; ++j)
        cm_json += (j ? ", " : "") + std::to_string(v[static_cast<size_t>(i * classes + j)]);
      cm_json += "]";
    }
    cm_json += "]";
  }
  if (f.has("json"))
    std::printf("{\"model\": \"%s\", \"test_accuracy\": %s, \"test_loss\": %s%s}\n", r.model_name.c_str(),
                json_double(m.at("accuracy")).c_str(), json_double(m.at("loss")).c_str(), cm_json.c_str());
  return 0;
}

int predict_command(const std::vector<std::string>& args) {
  auto specs = data_flags();
  specs.insert(specs.begin(), {{"checkpoint", true, "a checkpoint saved by spore train", ""},
                               {"input", true,
                                "a .npy batch (N, C, S, S) float32, already normalized, or one PNG/JPEG image "
                                "(prepared as the training run's image folder was)",
                                ""},
                               {"count", true, "how many test images to classify (without --input)", "10"}});
  Flags f("predict", specs);
  f.parse(args);
  if (wants_help(f, "usage: spore predict --checkpoint FILE [--input X.npy | --count N] [flags]")) return 0;
  SPORE_CHECK(!f.str("checkpoint").empty(), "spore predict needs --checkpoint FILE");
  set_mode(f);
  const train::Checkpoint c = train::load_checkpoint(f.str("checkpoint"));
  Restored r = restore_network(c, f.str("checkpoint"));
  DataOptions o = data_options(f, 0);
  data_from_checkpoint(o, c);
  const int64_t ch = o.channels, size = o.image_size;
  Tensor x, labels;
  const std::string input = f.str("input");
  auto ends_with = [&input](const std::string& e) {
    if (input.size() < e.size()) return false;
    std::string tail = input.substr(input.size() - e.size());
    for (char& k : tail) k = static_cast<char>(std::tolower(static_cast<unsigned char>(k)));
    return tail == e;
  };
  if (!input.empty() && (ends_with(".png") || ends_with(".jpg") || ends_with(".jpeg"))) {
    x = image_input(input, o, ch, /*as_idx=*/!c.texts.count("classes") || c.texts.at("classes").empty());
  } else if (!input.empty()) {
    x = data::read_npy(input).to(DType::Float32);
    SPORE_CHECK(x.dim() == 4 && x.shape()[1] == ch && x.shape()[2] == size && x.shape()[3] == size,
                "spore predict: --input ", input, " has shape ", shape_str(x.shape()), "; the model expects (N, ", ch,
                ", ", size, ", ", size, ")");
  } else {
    check_classes(o, c, f.str("checkpoint"));
    o.batch_size = f.integer("count", 1, 10000);
    auto it = test_batches(o)->iterate(0);
    auto row = it.next();
    SPORE_CHECK(row.has_value(), "spore predict: the test set is empty");
    x = (*row)[0];
    labels = (*row)[1];
  }
  const Tensor pred = ops::argmax((*r.net)(x), 1).to(DType::Int64).contiguous();
  const Tensor lab = labels.defined() ? labels.to(DType::Int64).contiguous() : Tensor();
  // An image folder's class names, label i = names[i]; IDX data sets have none.
  std::vector<std::string> names;
  if (auto it = c.texts.find("classes"); it != c.texts.end()) {
    std::istringstream in(it->second);
    for (std::string line; std::getline(in, line);) names.push_back(line);
  }
  auto named = [&names](int64_t k) {
    return k >= 0 && static_cast<size_t>(k) < names.size() ? " (" + names[static_cast<size_t>(k)] + ")" : std::string();
  };
  std::ostringstream json;
  json << "{\"predictions\": [";
  for (int64_t i = 0; i < pred.numel(); ++i) {
    const int64_t p = pred.data<int64_t>()[i];
    if (labels.defined()) {
      const int64_t l = lab.data<int64_t>()[i];
      std::printf("%lld\tpredicted %lld%s\tlabel %lld%s\n", static_cast<long long>(i), static_cast<long long>(p),
                  named(p).c_str(), static_cast<long long>(l), named(l).c_str());
    } else {
      std::printf("%lld\tpredicted %lld%s\n", static_cast<long long>(i), static_cast<long long>(p), named(p).c_str());
    }
    json << (i ? ", " : "") << p;
  }
  json << "]";
  if (!names.empty()) {
    json << ", \"class_names\": [";
    for (int64_t i = 0; i < pred.numel(); ++i) {
      const int64_t p = pred.data<int64_t>()[i];
      json << (i ? ", " : "") << json_string(p < static_cast<int64_t>(names.size()) ? names[static_cast<size_t>(p)] : "");
    }
    json << "]";
  }
  json << "}";
  if (f.has("json")) std::printf("%s\n", json.str().c_str());
  return 0;
}

}  // namespace spore::cli
