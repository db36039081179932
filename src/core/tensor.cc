// SPDX-License-Identifier: Apache-2.0
#include "spore/tensor.h"

#include "runtime/allocator.h"
#include "spore/ops.h"

namespace spore {

Storage::Storage(Device device, size_t nbytes) : nbytes_(nbytes), device_(device) {
  data_ = runtime::allocator_for(device).allocate(nbytes);
}

Storage::~Storage() { runtime::allocator_for(device_).deallocate(data_, nbytes_); }

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  int64_t n = 1;
  for (Dim d : shape) {
    SPORE_CHECK(d >= 0, "[empty] shape ", shape_str(shape),
                " has a negative or symbolic dimension; eager tensors need concrete sizes");
    n *= d;
  }
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(device, static_cast<size_t>(n) * dtype_size(dtype));
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
  return impl_->shape[normalize_axis(axis, dim(), "size")];
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (Dim d : impl_->shape) n *= d;
  return n;
}

bool Tensor::is_contiguous() const {
  int64_t s = 1;
  for (size_t i = impl_->shape.size(); i-- > 0;) {
    if (impl_->shape[i] != 1 && impl_->strides[i] != s) return false;
    s *= impl_->shape[i];
  }
  return true;
}

void* Tensor::data_ptr() const {
  auto* base = static_cast<char*>(impl_->storage->data());
  return base ? base + impl_->offset * static_cast<int64_t>(dtype_size(impl_->dtype)) : nullptr;
}

template <class T>
T Tensor::item() const {
  SPORE_CHECK(defined() && numel() == 1, "[item] needs a tensor with one element, got shape ",
              shape_str(shape()), "; index or reduce it first");
  SPORE_CHECK(device().type != DeviceType::Meta, "[item] a meta tensor has no values");
  return visit_dtype(dtype(), [&](auto v) -> T {
    using S = decltype(v);
    S s = *static_cast<const S*>(data_ptr());
    if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) return static_cast<T>(static_cast<float>(s));
    else return static_cast<T>(s);
  });
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  Tensor c = contiguous();
  std::vector<T> out(static_cast<size_t>(c.numel()));
  visit_dtype(dtype(), [&](auto v) {
    using S = decltype(v);
    const S* p = static_cast<const S*>(c.data_ptr());
    for (size_t i = 0; i < out.size(); ++i) {
      if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) out[i] = static_cast<T>(static_cast<float>(p[i]));
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
