// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "spore/device.h"
#include "spore/dtype.h"
#include "spore/error.h"
#include "spore/scalar.h"
#include "spore/shape.h"

namespace spore {

/// Memory shared by tensors (views share one Storage by reference count). The version counter
/// goes up on every in-place write, so a saved tensor can tell it was changed (autodiff), and a
/// kernel that caches something made from an input (a conv's reordered weights) can tell it is
/// stale. Every version, at construction and at each bump, comes from one process-wide counter,
/// so (storage memory, version) names one content even when memory is reused. Code that writes
/// through data_ptr() into memory others may have seen calls bump_version().
class Storage {
 public:
  /// Allocates `nbytes` from the device's caching allocator (no memory on `meta`).
  Storage(Device device, size_t nbytes);
  /// Borrows `nbytes` at `data` (a model file's weights mapped into memory): `owner` keeps the
  /// memory alive while any tensor uses it, and nothing is freed to the allocator. An owner
  /// that writes into the memory itself must call bump_version() after, or compiled plans may
  /// keep using what they made from the old contents.
  Storage(void* data, size_t nbytes, std::shared_ptr<const void> owner, Device device = kCPU);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version();

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  std::atomic<uint64_t> version_;
  std::shared_ptr<const void> owner_;  // set for borrowed memory
};

/// A number no storage version of this process has been or will be (the same counter): a stamp
/// for memory the runtime rewrites itself (a compiled plan's kept intermediates).
uint64_t fresh_version_stamp();

/// Opaque per-tensor trace membership, owned by the transform frames (src/autodiff); null when the
/// tensor belongs to no open trace or tape, which is the eager fast path.
struct TraceSlot;

/// The state behind a Tensor handle.
struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  Strides strides;
  int64_t offset = 0;  // in elements
  DType dtype = DType::Float32;
  bool weak = false;  // a wrapped C++ literal: never widens another operand's dtype
  std::shared_ptr<TraceSlot> trace;
};

/// An n-dimensional array: a plain, strided view of a Storage on a Device. Copies of a Tensor
/// share the same data; `clone()` copies it.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  /// A new contiguous tensor with uninitialized data.
  static Tensor empty(const Shape& shape, DType dtype = DType::Float32, Device device = kCPU);
  /// A view of `storage` with the given geometry (no copy).
  static Tensor view_of(std::shared_ptr<Storage> storage, const Shape& shape,
                        const Strides& strides, int64_t offset, DType dtype);

  bool defined() const { return impl_ != nullptr; }
  DType dtype() const { return get().dtype; }
  const Shape& shape() const { return get().shape; }
  const Strides& strides() const { return get().strides; }
  int64_t offset() const { return get().offset; }
  int64_t dim() const { return static_cast<int64_t>(get().shape.size()); }
  /// Size of `axis` (negative counts from the end).
  int64_t size(int64_t axis) const;
  int64_t numel() const;
  Device device() const { return get().storage->device(); }
  bool is_contiguous() const;
  bool weak() const { return get().weak; }
  size_t itemsize() const { return dtype_size(get().dtype); }

  /// Pointer to the first element (offset applied).
  void* data_ptr() const;
  template <class T>
  T* data() const {
    if (device().type == DeviceType::Meta) check_has_values("data");
    SPORE_CHECK(dtype_of<T>() == dtype(), "[data] tensor is ", dtype_name(dtype()),
                ", asked for ", dtype_name(dtype_of<T>()), "; call .to(dtype) first");
    return static_cast<T*>(data_ptr());
  }
  /// The value of a one-element tensor, converted to T.
  template <class T>
  T item() const;
  /// Elements in row-major order, converted to T (for tests and small tensors).
  template <class T>
  std::vector<T> to_vector() const;

  /// Same data in row-major order: returns *this when already contiguous.
  Tensor contiguous() const;
  /// A new tensor with its own copy of the data.
  Tensor clone() const;
  /// Converted to `dtype` (returns *this when it already has it).
  Tensor to(DType dtype) const;

  // Views (no copies). The same functions exist as free ops in spore/ops.h.
  Tensor reshape(const Shape& shape) const;
  Tensor view(const Shape& shape) const;
  Tensor transpose(int64_t a, int64_t b) const;
  Tensor permute(const std::vector<int64_t>& axes) const;
  Tensor slice(int64_t axis, int64_t start, int64_t stop, int64_t step = 1) const;
  Tensor squeeze(int64_t axis) const;
  Tensor unsqueeze(int64_t axis) const;
  Tensor expand(const Shape& shape) const;
  Tensor operator[](int64_t i) const;

  /// NumPy/PyTorch style text: "tensor([[1., 2.],\n        [3., 4.]])", summarized when large.
  std::string str() const;

  const std::shared_ptr<Storage>& storage() const { return get().storage; }
  uint64_t version() const { return get().storage->version(); }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  /// True when both handles refer to the same tensor object.
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

 private:
  // Every accessor goes through here, so using a default-constructed Tensor is a clear error
  // in any op, never a null dereference.
  const TensorImpl& get() const {
    if (impl_ == nullptr) [[unlikely]]
      throw_undefined();
    return *impl_;
  }
  [[noreturn]] static void throw_undefined();
  /// Throws a clear error for a tensor with no data (meta, or traced by jit/vmap).
  void check_has_values(const char* what) const;
  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace spore
