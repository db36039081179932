// SPDX-License-Identifier: Apache-2.0
// Optimizer oracle: each case runs one Spore optimizer for 10 steps on fixed parameters and a
// fixed gradient sequence; check.py runs torch.optim's (LAMB: the formula in torch ops) on the
// same values and compares every step's parameters. Also gradient clipping against
// torch.nn.utils and each learning-rate schedule's sequence against torch.optim.lr_scheduler.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "oracle.h"
#include "spore/optim/optim.h"

namespace spore::oracle {
namespace {

using Options = std::map<std::string, double>;
constexpr int64_t kSteps = 10;
const std::vector<Shape> kShapes = {{4, 3}, {5}, {2, 2, 2}};

// The typed options struct from a name -> value map (so cases also exercise the struct path).
std::unique_ptr<optim::Optimizer> make(const std::string& kind, const Options& o, std::vector<optim::ParamGroup> gs) {
  auto get = [&](const char* k, double d) { return o.count(k) ? o.at(k) : d; };
  if (kind == "sgd")
    return std::make_unique<optim::SGD>(
        gs, optim::SGDOptions{o.at("lr"), get("momentum", 0), get("dampening", 0), get("nesterov", 0) != 0,
                              get("weight_decay", 0)});
  if (kind == "adam" || kind == "adamw") {
    const std::pair<double, double> b{get("beta1", 0.9), get("beta2", 0.999)};
    if (kind == "adam")
      return std::make_unique<optim::Adam>(
          gs, optim::AdamOptions{o.at("lr"), b, get("eps", 1e-8), get("weight_decay", 0), get("amsgrad", 0) != 0});
    return std::make_unique<optim::AdamW>(
        gs, optim::AdamWOptions{o.at("lr"), b, get("eps", 1e-8), get("weight_decay", 1e-2), get("amsgrad", 0) != 0});
  }
  if (kind == "rmsprop")
    return std::make_unique<optim::RMSProp>(
        gs, optim::RMSPropOptions{o.at("lr"), get("alpha", 0.99), get("eps", 1e-8), get("weight_decay", 0),
                                  get("momentum", 0), get("centered", 0) != 0});
  if (kind == "adagrad")
    return std::make_unique<optim::Adagrad>(
        gs, optim::AdagradOptions{o.at("lr"), get("lr_decay", 0), get("weight_decay", 0),
                                  get("initial_accumulator_value", 0), get("eps", 1e-10)});
  return std::make_unique<optim::LAMB>(
      gs, optim::LAMBOptions{o.at("lr"), {get("beta1", 0.9), get("beta2", 0.999)}, get("eps", 1e-6),
                             get("weight_decay", 0)});
}

// `group1` non-empty: parameter 2 forms a second group with these overrides. `skip` lists
// (step * 3 + parameter) entries whose gradient is absent. `onecycle_max_lr` > 0: a OneCycleLR
// over the kSteps steps (PyTorch's defaults: momentum or beta1 cycled) steps after each update.
void optim_case(Writer& w, const std::string& kind, const Options& o, const Options& group1 = {},
                const std::vector<int64_t>& skip = {}, uint64_t seed = 0, double onecycle_max_lr = 0) {
  static uint64_t next_seed = 7000;
  if (seed == 0) seed = next_seed += 10;
  std::vector<Tensor> init, params, grads, traj(kShapes.size());
  for (size_t i = 0; i < kShapes.size(); ++i) {
    init.push_back(rand_tensor(kShapes[i], DType::Float32, seed + i));
    params.push_back(init.back().clone());
    Shape gs{kSteps};
    for (const Dim d : kShapes[i]) gs.push_back(d);
    grads.push_back(rand_tensor(gs, DType::Float32, seed + 5 + i));
  }
  std::vector<optim::ParamGroup> groups;
  if (group1.empty()) {
    groups.push_back({params, {}});
  } else {
    groups.push_back({{params[0], params[1]}, {}});
    groups.push_back({{params[2]}, group1});
  }
  Attrs attrs{{"optimizer", kind}, {"steps", kSteps}, {"skip", skip}};
  for (const auto& [k, v] : o) attrs.emplace_back(k, v);
  for (const auto& [k, v] : group1) attrs.emplace_back("g1." + k, v);
  std::vector<std::vector<Tensor>> history(kShapes.size());
  auto opt = make(kind, o, groups);
  std::unique_ptr<optim::OneCycleLR> sched;
  if (onecycle_max_lr > 0) {
    sched = std::make_unique<optim::OneCycleLR>(*opt, std::vector<double>{onecycle_max_lr}, kSteps);
    attrs.emplace_back("onecycle_max_lr", onecycle_max_lr);
    attrs.emplace_back("onecycle_total", kSteps);
  }
  for (int64_t s = 0; s < kSteps; ++s) {
    std::vector<Tensor> g;
    for (size_t i = 0; i < kShapes.size(); ++i) {
      const bool skipped = std::find(skip.begin(), skip.end(), s * 3 + static_cast<int64_t>(i)) != skip.end();
      g.push_back(skipped ? Tensor() : grads[i][s].contiguous());
    }
    opt->step(g);
    if (sched) sched->step();
    for (size_t i = 0; i < kShapes.size(); ++i) history[i].push_back(params[i].clone());
  }
  for (size_t i = 0; i < kShapes.size(); ++i) traj[i] = ops::stack(history[i]);
  std::vector<Tensor> ins = init;
  ins.insert(ins.end(), grads.begin(), grads.end());
  w.add("optim_steps", ins, traj, attrs, {.rtol = 1e-5, .atol = 1e-6});
}

void clip_cases(Writer& w) {
  uint64_t seed = 7500;
  for (const double p : {2.0, 1.0, 3.0, double(INFINITY)}) {
    for (const double max_norm : {1.0, 100.0}) {
      std::vector<Tensor> gs = {rand_tensor({4, 3}, DType::Float32, seed++), rand_tensor({7}, DType::Float32, seed++),
                                rand_tensor({2, 5}, DType::Float32, seed++)};
      const std::vector<Tensor> ins = {gs[0].clone(), gs[1].clone(), gs[2].clone()};
      const Tensor total = optim::clip_grad_norm_(gs, max_norm, p);
      w.add("clip_grad_norm_", ins, {gs[0], gs[1], gs[2], total}, {{"max_norm", max_norm}, {"norm_type", p}},
            {.rtol = 1e-5, .atol = 1e-6});
    }
  }
  std::vector<Tensor> gs = {rand_tensor({4, 3}, DType::Float32, seed++), rand_tensor({9}, DType::Float32, seed++)};
  const std::vector<Tensor> ins = {gs[0].clone(), gs[1].clone()};
  optim::clip_grad_value_(gs, 0.5);
  w.add("clip_grad_value_", ins, gs, {{"clip", 0.5}});
}

// Runs a schedule `steps` times on an SGD with two groups (lr 0.1 and 0.05): output 0 is each
// step's rates from step(), output 1 the same from lr_at().
constexpr int64_t kSchedSteps = 30;
template <class Make>
void schedule_case(Writer& w, const std::string& name, Attrs attrs, Make make_sched) {
  Tensor a = ops::zeros({2}), b = ops::zeros({2});
  optim::SGD opt(std::vector<optim::ParamGroup>{{{a}, {{"lr", 0.1}}}, {{b}, {{"lr", 0.05}}}});
  auto sched = make_sched(opt);
  std::vector<double> stepped, pure;
  for (int64_t s = 0; s < kSchedSteps; ++s) {
    if (s > 0) sched->step();
    for (size_t g = 0; g < 2; ++g) {
      stepped.push_back(opt.lr(g));
      pure.push_back(sched->lr_at(s, g));
    }
  }
  attrs.emplace_back("schedule", name);
  attrs.emplace_back("steps", kSchedSteps);
  const Shape shape{kSchedSteps, 2};
  w.add("lr_schedule", {}, {ops::from_vector(stepped, shape), ops::from_vector(pure, shape)}, attrs,
        {.rtol = 1e-9, .atol = 1e-15});
}

void plateau_case(Writer& w, const optim::PlateauOptions& o, const std::vector<double>& metrics) {
  Tensor a = ops::zeros({2}), b = ops::zeros({2});
  optim::SGD opt(std::vector<optim::ParamGroup>{{{a}, {{"lr", 0.1}}}, {{b}, {{"lr", 0.05}}}});
  optim::ReduceLROnPlateau sched(opt, o);
  std::vector<double> lrs;
  for (const double m : metrics) {
    sched.step(m);
    lrs.push_back(opt.lr(0));
    lrs.push_back(opt.lr(1));
  }
  const Attrs attrs{{"schedule", std::string("plateau")}, {"mode", std::string(o.maximize ? "max" : "min")},
                    {"factor", o.factor}, {"patience", o.patience}, {"threshold", o.threshold},
                    {"threshold_mode", std::string(o.relative_threshold ? "rel" : "abs")},
                    {"cooldown", o.cooldown}, {"min_lr", o.min_lr}, {"eps", o.eps}};
  w.add("lr_plateau", {ops::from_vector(metrics)},
        {ops::from_vector(lrs, {static_cast<int64_t>(metrics.size()), 2})}, attrs, {.rtol = 1e-9, .atol = 1e-15});
}

void schedule_cases(Writer& w) {
  using P = std::unique_ptr<optim::LRScheduler>;
  schedule_case(w, "step", {{"step_size", int64_t{7}}, {"gamma", 0.5}},
                [](optim::Optimizer& o) -> P { return std::make_unique<optim::StepLR>(o, 7, 0.5); });
  schedule_case(w, "multistep", {{"milestones", std::vector<int64_t>{5, 12, 12, 20}}, {"gamma", 0.3}},
                [](optim::Optimizer& o) -> P {
                  return std::make_unique<optim::MultiStepLR>(o, std::vector<int64_t>{20, 12, 5, 12}, 0.3);
                });
  schedule_case(w, "exponential", {{"gamma", 0.9}},
                [](optim::Optimizer& o) -> P { return std::make_unique<optim::ExponentialLR>(o, 0.9); });
  schedule_case(w, "cosine", {{"t_max", int64_t{20}}, {"eta_min", 0.001}, {"warmup", int64_t{0}}},
                [](optim::Optimizer& o) -> P { return std::make_unique<optim::CosineAnnealingLR>(o, 20, 0.001); });
  schedule_case(w, "cosine", {{"t_max", int64_t{25}}, {"eta_min", 0.0}, {"warmup", int64_t{5}}, {"start_factor", 0.1}},
                [](optim::Optimizer& o) -> P {
                  return std::make_unique<optim::CosineAnnealingLR>(o, 25, 0.0, 5, 0.1);
                });
  schedule_case(w, "polynomial", {{"total_iters", int64_t{20}}, {"power", 2.0}},
                [](optim::Optimizer& o) -> P { return std::make_unique<optim::PolynomialLR>(o, 20, 2.0); });
  schedule_case(w, "onecycle", {{"max_lr", std::vector<double>{0.5, 0.2}}, {"total_steps", int64_t{30}},
                                {"pct_start", 0.3}, {"anneal", std::string("cos")}, {"three_phase", false}},
                [](optim::Optimizer& o) -> P {
                  return std::make_unique<optim::OneCycleLR>(o, std::vector<double>{0.5, 0.2}, 30,
                                                             optim::OneCycleOptions{.cycle_momentum = false});
                });
  schedule_case(w, "onecycle", {{"max_lr", std::vector<double>{0.4}}, {"total_steps", int64_t{32}},
                                {"pct_start", 0.25}, {"anneal", std::string("linear")}, {"three_phase", true}},
                [](optim::Optimizer& o) -> P {
                  return std::make_unique<optim::OneCycleLR>(
                      o, std::vector<double>{0.4}, 32,
                      optim::OneCycleOptions{.pct_start = 0.25, .cos_anneal = false, .three_phase = true,
                                             .cycle_momentum = false});
                });
  std::vector<double> m;
  for (int i = 0; i < 30; ++i) m.push_back(i < 6 ? 1.0 - 0.1 * i : 0.45 + 0.001 * ((i * 7) % 5));
  plateau_case(w, {.factor = 0.5, .patience = 2, .cooldown = 1}, m);
  std::vector<double> acc;
  for (int i = 0; i < 30; ++i) acc.push_back(i < 8 ? 0.1 * i : 0.7 + 0.01 * ((i * 3) % 4));
  plateau_case(w, {.maximize = true, .factor = 0.3, .patience = 3, .threshold = 0.02, .relative_threshold = false,
                   .min_lr = 0.01},
               acc);
}

}  // namespace

SPORE_ORACLE_FAMILY(optim) {
  optim_case(w, "sgd", {{"lr", 0.1}});
  optim_case(w, "sgd", {{"lr", 0.05}, {"momentum", 0.9}});
  optim_case(w, "sgd", {{"lr", 0.05}, {"momentum", 0.9}, {"dampening", 0.1}, {"weight_decay", 0.01}});
  optim_case(w, "sgd", {{"lr", 0.05}, {"momentum", 0.8}, {"nesterov", 1}, {"weight_decay", 0.02}});
  optim_case(w, "sgd", {{"lr", 0.1}, {"momentum", 0.9}}, {{"lr", 0.01}, {"momentum", 0.5}});
  optim_case(w, "sgd", {{"lr", 0.1}, {"momentum", 0.9}}, {}, {1, 4, 5, 12});
  optim_case(w, "adam", {{"lr", 0.01}});
  optim_case(w, "adam", {{"lr", 0.01}, {"weight_decay", 0.1}});
  // beta2 0.6: the second moment falls on some steps, so AMSGrad's maximum differs from it.
  optim_case(w, "adam", {{"lr", 0.01}, {"amsgrad", 1}, {"beta2", 0.6}});
  optim_case(w, "adam", {{"lr", 0.02}, {"beta1", 0.8}, {"beta2", 0.99}, {"eps", 1e-6}});
  optim_case(w, "adam", {{"lr", 0.01}}, {{"lr", 0.001}, {"weight_decay", 0.05}});
  optim_case(w, "adam", {{"lr", 0.01}, {"amsgrad", 1}, {"beta2", 0.6}}, {}, {0, 4, 5, 12, 13});
  optim_case(w, "adamw", {{"lr", 0.01}});
  optim_case(w, "adamw", {{"lr", 0.01}, {"weight_decay", 0.1}, {"amsgrad", 1}, {"beta2", 0.5}});
  optim_case(w, "adamw", {{"lr", 0.01}}, {{"lr", 0.03}, {"weight_decay", 0.0}});
  optim_case(w, "rmsprop", {{"lr", 0.01}});
  optim_case(w, "rmsprop", {{"lr", 0.01}, {"momentum", 0.9}});
  optim_case(w, "rmsprop", {{"lr", 0.01}, {"centered", 1}, {"alpha", 0.9}});
  optim_case(w, "rmsprop", {{"lr", 0.005}, {"centered", 1}, {"momentum", 0.5}, {"weight_decay", 0.01}});
  optim_case(w, "rmsprop", {{"lr", 0.01}}, {{"lr", 0.001}, {"momentum", 0.9}});
  optim_case(w, "adagrad", {{"lr", 0.1}});
  optim_case(w, "adagrad", {{"lr", 0.1}, {"lr_decay", 0.01}, {"initial_accumulator_value", 0.1}, {"weight_decay", 0.01}});
  optim_case(w, "adagrad", {{"lr", 0.1}}, {{"lr", 0.02}, {"lr_decay", 0.05}}, {2, 3});
  optim_case(w, "lamb", {{"lr", 0.01}});
  optim_case(w, "lamb", {{"lr", 0.01}, {"weight_decay", 0.01}, {"beta1", 0.85}});
  optim_case(w, "lamb", {{"lr", 0.01}}, {{"lr", 0.002}, {"weight_decay", 0.1}});
  // OneCycleLR cycling momentum (SGD, RMSProp) or beta1 (Adam, AdamW, LAMB) as PyTorch does.
  optim_case(w, "sgd", {{"lr", 0.1}, {"momentum", 0.9}}, {}, {}, 0, 0.2);
  optim_case(w, "sgd", {{"lr", 0.1}, {"momentum", 0.9}, {"nesterov", 1}}, {{"lr", 0.05}}, {}, 0, 0.2);
  optim_case(w, "rmsprop", {{"lr", 0.01}, {"momentum", 0.5}}, {}, {}, 0, 0.02);
  optim_case(w, "adam", {{"lr", 0.01}}, {}, {}, 0, 0.05);
  optim_case(w, "adamw", {{"lr", 0.01}, {"weight_decay", 0.1}}, {}, {}, 0, 0.05);
  optim_case(w, "lamb", {{"lr", 0.01}}, {}, {}, 0, 0.05);
  clip_cases(w);
  schedule_cases(w);
}

}  // namespace spore::oracle
