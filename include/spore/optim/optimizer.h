// SPDX-License-Identifier: Apache-2.0
#pragma once
// The optimizer contract (issue 5): an Optimizer updates parameter tensors in place from
// gradients given in params() order. Everything inside step() is written with ops that run both
// eagerly and under a symbolic jit trace: the learning rate and the step count are tensors, the
// hyper-parameters fixed at construction are C++ numbers, and results are written back with
// ops::copy_, so under jit every parameter and state tensor becomes a state output that the
// executor updates in place, and a schedule changing the learning rate never recompiles.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "spore/tensor.h"
#include "spore/tree.h"

namespace spore::optim {

/// Parameters sharing settings. `options` overrides the optimizer's defaults for this group by
/// name ("lr", "weight_decay", "momentum", "beta1", ...; booleans as 0 or 1).
struct ParamGroup {
  std::vector<Tensor> params;
  std::map<std::string, double> options;
};

/// Base of every optimizer: parameter groups, per-group learning-rate tensors, per-parameter
/// state slots and their checkpoint form. Subclasses say which slots a parameter keeps and how
/// one parameter is updated.
class Optimizer {
 public:
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  /// One update, in place, of every parameter whose gradient is defined; `grads` holds one
  /// gradient per parameter in params() order (an undefined Tensor skips that parameter and its
  /// state, as a parameter without a gradient in PyTorch).
  void step(const std::vector<Tensor>& grads);
  /// The same with gradients as a tree: a list with one child per parameter (None skips one),
  /// or any tree whose tensor leaves are in params() order.
  void step(const TensorTree& grads);
  /// `opt.step({g0, g1})` (a braced list would otherwise match both overloads above).
  void step(std::initializer_list<Tensor> grads) { step(std::vector<Tensor>(grads)); }

  /// Every parameter, group after group.
  std::vector<Tensor> params() const;
  size_t num_groups() const { return groups_.size(); }
  /// The parameters of one group.
  const std::vector<Tensor>& group_params(size_t group) const;
  /// A group's value of an option (its override, else the default); errors on unknown names.
  double option(const std::string& name, size_t group = 0) const;
  /// The class name ("SGD", "Adam", ...), used in messages.
  const std::string& name() const { return name_; }

  /// Sets the learning rate of one group, or of all groups by default. The 0-d float32 tensor
  /// behind it is updated in place, so a compiled step reads the new value without retracing.
  void set_lr(double lr, size_t group = SIZE_MAX);
  /// The learning rate last set (exactly as given, not rounded to float32).
  double lr(size_t group = 0) const;
  /// The 0-d float32 tensor the step reads.
  const Tensor& lr_tensor(size_t group = 0) const;

  /// Sets a scheduled option (scheduled_options(): SGD's and RMSProp's "momentum", the Adam
  /// family's and LAMB's "beta1") of one group, or of all groups by default. As for set_lr, the
  /// value lives in a 0-d tensor the step reads, so a compiled step sees it without retracing
  /// (OneCycleLR cycles momentum through this).
  void set_option(const std::string& name, double value, size_t group = SIZE_MAX);
  /// The options set_option accepts, in the order the subclass declared them.
  const std::vector<std::string>& scheduled_options() const { return scheduled_; }

  /// A copy of the optimizer state for checkpoints: "g.lr" and "g.<option>" for each scheduled
  /// option per group, and "g.i.slot" per parameter i of group g and slot (step,
  /// momentum_buffer, exp_avg, exp_avg_sq, ...).
  std::vector<std::pair<std::string, Tensor>> state_dict() const;
  /// Loads a state_dict() of an optimizer of the same kind, groups, parameter shapes and
  /// options. Every entry is checked (missing, unexpected, shape, dtype) before any is written,
  /// so a mismatch leaves the optimizer as it was.
  void load_state_dict(const std::vector<std::pair<std::string, Tensor>>& sd);

 protected:
  /// `defaults` lists every option this optimizer knows, with its default value; a group that
  /// overrides any other name is an error. Subclasses call init_state() at the end of their
  /// constructor (slots depend on their virtual functions).
  Optimizer(std::string name, std::vector<ParamGroup> groups, std::map<std::string, double> defaults);

  /// State slots each parameter of `group` keeps, in order.
  virtual std::vector<std::string> slot_names(size_t group) const = 0;
  /// A slot's initial value (default: a 0-d float32 zero for "step", else zeros like `param`).
  virtual Tensor init_slot(const std::string& slot, const Tensor& param, size_t group) const;
  /// Updates `param` in place from `grad` (same shape and dtype), with `slots` in slot_names()
  /// order; written only with ops that also run under a symbolic trace.
  virtual void update(size_t group, Tensor& param, const Tensor& grad, std::vector<Tensor>& slots) = 0;

  /// Creates the slots of every parameter; called once by each subclass constructor.
  void init_state();
  /// The learning rate of `group` as a 0-d tensor of `dtype` (for use inside update()).
  Tensor lr_as(size_t group, DType dtype) const;
  /// Makes `name` (one of the defaults) a scheduled option: each group keeps its value in a 0-d
  /// float64 tensor that update() reads with option_as(). Called by subclass constructors.
  /// `keep_zero`: a group built with 0 cannot be set to another value (SGD and RMSProp keep no
  /// momentum buffer without momentum). Values outside [lo, hi] are refused.
  void schedule_option(const std::string& name, double lo, double hi, bool keep_zero = false);
  /// A scheduled option of `group` as a 0-d tensor of `dtype` (float64: exact, for bias
  /// corrections computed in double as PyTorch does).
  Tensor option_as(size_t group, const std::string& name, DType dtype) const;
  /// An option's value when the optimizer was built (what slot_names() decides from: a
  /// scheduled option may change later).
  double built_option(const std::string& name, size_t group) const;
  /// Checks one option against [lo, hi] in every group, naming the group and the fix.
  void check_range(const std::string& option, double lo, double hi) const;

 private:
  struct Group {
    std::vector<Tensor> params;
    std::map<std::string, double> options;  // defaults overlaid by the group's overrides
    Tensor lr;                              // 0-d float32, written in place by set_lr
    double lr_value = 0;
    std::vector<std::vector<Tensor>> slots;  // per parameter, in slot_names() order
    std::map<std::string, Tensor> scheduled;  // scheduled options: 0-d float64, written in place
    std::map<std::string, double> built;      // their values at construction
  };
  struct Schedulable {
    double lo, hi;
    bool keep_zero;
  };
  // A value a scheduled option of group `g` may take (set_option, load_state_dict).
  void check_scheduled(const std::string& name, double value, size_t g, const char* caller) const;
  std::string name_;
  std::vector<std::string> scheduled_;
  std::map<std::string, Schedulable> schedulable_;
  std::vector<Group> groups_;
  size_t num_params_ = 0;
};

}  // namespace spore::optim
