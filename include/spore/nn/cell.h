// SPDX-License-Identifier: Apache-2.0
#pragma once
// Cell: MindSpore's name for a module. A Cell owns its parameters and buffers as Tensor members
// of the subclass and registers them by pointer, so the same slot can be swapped for a traced
// value (functional_call, how grad reaches the weights) or updated in place by an optimizer.
// Children are registered the same way; names are dotted paths ("features.0.weight").
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "spore/guard.h"
#include "spore/scope.h"
#include "spore/tensor.h"
#include "spore/tree.h"

namespace spore::nn {

class Cell {
 public:
  /// `type_name` ("Dense", "Conv2d") appears in error messages.
  explicit Cell(std::string type_name);
  virtual ~Cell();
  Cell(const Cell&) = delete;
  Cell& operator=(const Cell&) = delete;

  /// Registers a trainable tensor member. `slot` must outlive the cell (it is a member) and hold a
  /// defined floating tensor; names are unique among this cell's parameters, buffers and children.
  void register_parameter(std::string name, Tensor* slot);
  /// Registers state that is saved but not trained (BatchNorm running statistics).
  void register_buffer(std::string name, Tensor* slot);
  /// Registers a child owned by the subclass.
  void register_cell(std::string name, Cell* child);

  /// Every parameter of this cell and its descendants, depth first, with dotted names (a tied
  /// tensor once).
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<Tensor> parameters() const;
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  /// Direct children, in registration order.
  std::vector<std::pair<std::string, Cell*>> named_cells() const;
  /// The slots behind named_parameters()/named_buffers(): writing through them replaces the tensor.
  /// A tensor held by several slots (tied weights, a shared sub-cell) is listed once, under its
  /// first name, in named_parameters(), parameters() and state_dict(), as in PyTorch; with
  /// `include_tied` every slot is listed (functional_call fills them all from that one entry).
  std::vector<std::pair<std::string, Tensor*>> parameter_slots(bool include_tied = false);
  std::vector<std::pair<std::string, Tensor*>> buffer_slots();

  /// Training mode for this cell and every descendant (Dropout, BatchNorm read it).
  void train(bool on = true);
  void eval() { train(false); }
  /// Under jit this is a guard: the compiled graph is reused only while the mode is the same.
  bool is_training() const { return training_.get(); }

  /// Parameters then buffers, dotted names; the tensors are the cell's own (not copies).
  std::vector<std::pair<std::string, Tensor>> state_dict() const;
  /// Copies values in place (a slot on the meta device is replaced by a copy instead). Every
  /// key is checked first: missing (strict only), unexpected (strict only), shape or dtype
  /// mismatched and duplicated keys are all listed in one error and nothing is written.
  void load_state_dict(const std::vector<std::pair<std::string, Tensor>>& sd, bool strict = true);
  /// Converts every floating parameter and buffer to `dtype` (integer buffers are kept).
  void to(DType dtype);
  /// Gives every parameter and buffer built on the meta device (nn::init::DeviceScope) real,
  /// zero-filled memory on `device`; tied slots stay tied. Load weights or reset_parameters()
  /// afterwards.
  void to_empty(Device device = kCPU);
  /// Redraws every parameter and buffer in place with the initializer its layer's constructor
  /// used, in the constructor's order (PyTorch's reset_parameters over the whole tree): under
  /// the same manual_seed, a model built on the meta device, then to_empty() and
  /// reset_parameters(), equals the model built directly. Running statistics restart. Tied
  /// slots stay tied and keep the draw of the first slot in named order (the others still
  /// draw, into scratch, as their constructors did); a child registered twice is reset once.
  /// Initialization a model applies after building its layers (a kaiming_normal_ over its
  /// convolutions) is replayed only if the model overrides reset_own() to repeat it.
  void reset_parameters();
  /// TensorTree::dict of named_parameters(): the argument grad differentiates.
  TensorTree parameter_tree() const;
  const std::string& type_name() const { return type_name_; }
  /// The name its parent registered it under (the first, for a shared cell): the scope its
  /// calls open, so traced nodes carry the Cell path ("features/3").
  const std::string& scope_name() const { return scope_name_; }
  int64_t num_parameters() const;

 protected:
  /// This cell's part of reset_parameters(): redraw its own parameters and buffers in place as
  /// its constructor drew them, calling reset_child() on each child at the point the
  /// constructor built it. The default serves cells with no tensors of their own (containers,
  /// composites): it resets the children in registration order, and refuses a cell that has
  /// tensors of its own, which must override it.
  virtual void reset_own();
  /// Resets `child` as part of the running reset_parameters() (once, however often registered).
  void reset_child(Cell& child);

 private:
  void check_new_name(const std::string& name, const char* what) const;
  template <class Fn>
  void walk(const std::string& prefix, bool buffers, Fn&& fn) const;

  std::string type_name_;
  std::string scope_name_;
  GuardedFlag training_{true};
  std::vector<std::pair<std::string, Tensor*>> params_;
  std::vector<std::pair<std::string, Tensor*>> buffers_;
  std::vector<std::pair<std::string, Cell*>> children_;
  std::set<const Cell*>* reset_done_ = nullptr;  // during reset_parameters(): the cells already reset
};

/// A cell of one tensor input and one tensor output: the element type of SequentialCell.
class UnaryCell : public Cell {
 public:
  using Cell::Cell;
  /// The forward computation (MindSpore's name).
  virtual Tensor construct(const Tensor& x) = 0;
  Tensor operator()(const Tensor& x) {
    NameScope scope(scope_name());
    return construct(x);
  }
};

namespace detail {
/// Swaps a cell's parameters for the leaves of `params` and restores them when destroyed.
class ParameterSwap {
 public:
  ParameterSwap(Cell& cell, const TensorTree& params);
  ~ParameterSwap();
  ParameterSwap(const ParameterSwap&) = delete;
  ParameterSwap& operator=(const ParameterSwap&) = delete;

 private:
  std::vector<std::pair<Tensor*, Tensor>> saved_;
};
}  // namespace detail

/// Runs `fn()` with the cell's parameters temporarily replaced by the leaves of `params` (a dict
/// keyed like cell.parameter_tree()), restoring them afterwards even when fn throws. How a loss is
/// differentiated with respect to a Cell's weights:
/// `value_and_grad([&](const TensorTree& p) { return functional_call(net, p, [&] { return
/// loss(net(x), y); }); })(net.parameter_tree())`.
template <class F>
auto functional_call(Cell& cell, const TensorTree& params, F&& fn) {
  detail::ParameterSwap swap(cell, params);
  return fn();
}

}  // namespace spore::nn
