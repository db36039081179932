// SPDX-License-Identifier: Apache-2.0
#include "spore/tensor.h"

#include "core/attrs.h"
#include "runtime/allocator.h"
#include "spore/ops.h"

namespace spore {

namespace {
// The one source of versions (a process-wide counter, like the registries allowed global state):
// no two storages, and no two writes, ever show the same version.
uint64_t next_version() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

uint64_t fresh_version_stamp() { return next_version(); }

void Storage::bump_version() { version_.store(next_version(), std::memory_order_relaxed); }

Storage::Storage(Device device, size_t nbytes) : nbytes_(nbytes), device_(device), version_(next_version()) {
  data_ = runtime::allocator_for(device).allocate(nbytes);
}

Storage::Storage(void* data, size_t nbytes, std::shared_ptr<const void> owner, Device device)
    : data_(data), nbytes_(nbytes), device_(device), version_(next_version()), owner_(std::move(owner)) {
  SPORE_CHECK(owner_ != nullptr, "[storage] borrowed memory needs an owner that keeps it alive");
}

Storage::~Storage() {
  if (owner_ == nullptr) runtime::allocator_for(device_).deallocate(data_, nbytes_);
}

void Tensor::throw_undefined() {
  throw Error("[tensor] this tensor is undefined (default-constructed or moved from); "
              "create it with a factory such as zeros() or pass a defined tensor");
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  SPORE_CHECK(shape.size() <= static_cast<size_t>(kMaxRank), "[empty] rank ", shape.size(),
              " is over the limit of ", kMaxRank, " dimensions; merge dimensions with reshape");
  int64_t n = 1;
  for (Dim d : shape) {
    // A meta tensor (types only) may have symbolic sizes: a traced value whose size is known
    // only when the graph runs. It owns no bytes.
    if (device.type == DeviceType::Meta && is_symbol_id(d)) {
      n = 0;
      continue;
    }
    SPORE_CHECK(d >= 0, "[empty] shape ", shape_str(shape),
                " has a negative or symbolic dimension; eager tensors need concrete sizes");
    // Overflowing sizes would wrap to a small allocation and then to out-of-bounds writes.
    SPORE_CHECK(!__builtin_mul_overflow(n, d, &n), "[empty] shape ", shape_str(shape),
                " has more than 2^63 elements");
  }
  int64_t bytes = 0;
  SPORE_CHECK(!__builtin_mul_overflow(n, static_cast<int64_t>(dtype_size(dtype)), &bytes), "[empty] shape ",
              shape_str(shape), " of ", dtype_name(dtype), " needs more than 2^63 bytes");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(device, static_cast<size_t>(bytes));
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::view_of(std::shared_ptr<Storage> storage, const Shape& shape, const Strides& strides,
                       int64_t offset, DType dtype) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->shape = shape;
  impl->strides = strides;
  impl->offset = offset;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

int64_t Tensor::size(int64_t axis) const {
  return shape()[normalize_axis(axis, dim(), "size")];
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (Dim d : shape()) n *= d;
  return n;
}

bool Tensor::is_contiguous() const {
  const TensorImpl& t = get();
  int64_t s = 1;
  for (size_t i = t.shape.size(); i-- > 0;) {
    if (t.shape[i] != 1 && t.strides[i] != s) return false;
    s *= t.shape[i];
  }
  return true;
}

void* Tensor::data_ptr() const {
  const TensorImpl& t = get();
  auto* base = static_cast<char*>(t.storage->data());
  return base ? base + t.offset * static_cast<int64_t>(dtype_size(t.dtype)) : nullptr;
}

void Tensor::check_has_values(const char* what) const {
  if (device().type != DeviceType::Meta) return;
  // A traced tensor (jit, vmap) is a meta tensor with trace membership: its value does not exist
  // while the function is being traced.
  SPORE_CHECK(get().trace == nullptr, "[", what, "] this tensor is a traced value inside jit or vmap: it has no data "
              "while the function is traced, so C++ control flow cannot depend on it. Use cond(pred, true_fn, false_fn, "
              "operands) or while_loop(cond_fn, body_fn, init) for data-dependent control flow, or run the function "
              "without jit");
  throw Error(detail::cat("[", what, "] a meta tensor has no values (it carries only a shape and a dtype)"));
}

template <class T>
T Tensor::item() const {
  SPORE_CHECK(defined() && numel() == 1, "[item] needs a tensor with one element, got shape ",
              shape_str(shape()), "; index or reduce it first");
  check_has_values("item");
  return visit_dtype(dtype(), [&](auto v) -> T {
    using S = decltype(v);
    S s = *static_cast<const S*>(data_ptr());
    if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) return T(static_cast<float>(s));
    else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(s));
    else return static_cast<T>(s);
  });
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  check_has_values("to_vector");
  Tensor c = contiguous();
  std::vector<T> out(static_cast<size_t>(c.numel()));
  visit_dtype(dtype(), [&](auto v) {
    using S = decltype(v);
    const S* p = static_cast<const S*>(c.data_ptr());
    for (size_t i = 0; i < out.size(); ++i) {
      if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) out[i] = T(static_cast<float>(p[i]));
      else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) out[i] = T(static_cast<float>(p[i]));
      else out[i] = static_cast<T>(p[i]);
    }
  });
  return out;
}

#define SPORE_INSTANTIATE(T)                 \
  template T Tensor::item<T>() const;        \
  template std::vector<T> Tensor::to_vector<T>() const;
SPORE_INSTANTIATE(bool)
SPORE_INSTANTIATE(uint8_t)
SPORE_INSTANTIATE(int8_t)
SPORE_INSTANTIATE(int16_t)
SPORE_INSTANTIATE(int32_t)
SPORE_INSTANTIATE(int64_t)
SPORE_INSTANTIATE(float)
SPORE_INSTANTIATE(double)
SPORE_INSTANTIATE(Half)
SPORE_INSTANTIATE(BFloat16)
#undef SPORE_INSTANTIATE

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : ops::copy(*this); }
Tensor Tensor::clone() const { return ops::copy(*this); }
Tensor Tensor::to(DType t) const { return t == dtype() ? *this : ops::cast(*this, t); }
Tensor Tensor::reshape(const Shape& s) const { return ops::reshape(*this, s); }
Tensor Tensor::view(const Shape& s) const { return ops::view(*this, s); }
Tensor Tensor::transpose(int64_t a, int64_t b) const { return ops::transpose(*this, a, b); }
Tensor Tensor::permute(const std::vector<int64_t>& axes) const { return ops::permute(*this, axes); }
Tensor Tensor::slice(int64_t axis, int64_t start, int64_t stop, int64_t step) const {
  return ops::slice(*this, axis, start, stop, step);
}
Tensor Tensor::squeeze(int64_t axis) const { return ops::squeeze(*this, axis); }
Tensor Tensor::unsqueeze(int64_t axis) const { return ops::unsqueeze(*this, axis); }
Tensor Tensor::expand(const Shape& s) const { return ops::expand(*this, s); }
Tensor Tensor::operator[](int64_t i) const { return ops::select(*this, 0, i); }

}  // namespace spore
