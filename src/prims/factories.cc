// SPDX-License-Identifier: Apache-2.0
#include "prims/factories.h"
#include "prims/elementwise_infer.h"

#include <type_traits>

#include "runtime/parallel.h"

namespace spore::prims {
namespace {

template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}

const Primitive& fill_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<FillAttrs> spec;
    spec.name = "fill";
    spec.fusion = FusionClass::Elementwise;
    spec.num_inputs = 0;
    spec.infer = [](const FillAttrs& a, std::span<const TensorType>, OutTypes& out) { out.add(a.dtype, a.shape); };
    spec.cost = [](const FillAttrs& a, std::span<const TensorType>, std::span<const TensorType> out) {
      const double n = cost_numel(a.shape);
      return Cost{0, n * dtype_size(a.dtype)};
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu",
                  .run = [](const void* attrs, std::span<const Buffer>, std::span<const Buffer> out, const KernelContext&) {
                    const auto& a = *static_cast<const FillAttrs*>(attrs);
                    visit_dtype(a.dtype, [&](auto tag) {
                      using T = decltype(tag);
                      T v;
                      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) v = static_cast<T>(a.int_value);
                      else v = from_double<T>(a.value);
                      T* o = out[0].ptr<T>();
                      runtime::parallel_for(out[0].numel(), runtime::kParallelGrain, [&](int64_t b, int64_t e) {
                        std::fill(o + b, o + e, v);
                      });
                    });
                  }});
    return q;
  }();
  return p;
}

const Primitive& arange_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<ArangeAttrs> spec;
    spec.name = "arange";
    spec.num_inputs = 0;
    spec.infer = [](const ArangeAttrs& a, std::span<const TensorType>, OutTypes& out) { out.add(a.dtype, {a.n}); };
    spec.cost = [](const ArangeAttrs& a, std::span<const TensorType>, std::span<const TensorType>) {
      return Cost{static_cast<double>(a.n), static_cast<double>(a.n) * dtype_size(a.dtype)};
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu",
                  .run = [](const void* attrs, std::span<const Buffer>, std::span<const Buffer> out, const KernelContext&) {
                    const auto& a = *static_cast<const ArangeAttrs*>(attrs);
                    visit_dtype(a.dtype, [&](auto tag) {
                      using T = decltype(tag);
                      T* o = out[0].ptr<T>();
                      for (int64_t i = 0; i < a.n; ++i) {
                        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
                          o[i] = static_cast<T>(a.int_start + i * a.int_step);
                        else
                          o[i] = from_double<T>(a.start + static_cast<double>(i) * a.step);
                      }
                    });
                  }});
    return q;
  }();
  return p;
}

const Primitive& linspace_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<LinspaceAttrs> spec;
    spec.name = "linspace";
    spec.num_inputs = 0;
    spec.infer = [](const LinspaceAttrs& a, std::span<const TensorType>, OutTypes& out) { out.add(a.dtype, {a.steps}); };
    spec.cost = [](const LinspaceAttrs& a, std::span<const TensorType>, std::span<const TensorType>) {
      return Cost{2.0 * static_cast<double>(a.steps), static_cast<double>(a.steps) * dtype_size(a.dtype)};
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu",
                  .run = [](const void* attrs, std::span<const Buffer>, std::span<const Buffer> out, const KernelContext&) {
                    const auto& a = *static_cast<const LinspaceAttrs*>(attrs);
                    visit_dtype(a.dtype, [&](auto tag) {
                      using T = decltype(tag);
                      T* o = out[0].ptr<T>();
                      const int64_t n = a.steps;
                      if (n == 1) {
                        o[0] = from_double<T>(a.start);
                        return;
                      }
                      if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
                        using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
                        const C step = (static_cast<C>(a.stop) - static_cast<C>(a.start)) / static_cast<C>(n - 1);
                        const int64_t half = n / 2;
                        for (int64_t i = 0; i < n; ++i)
                          o[i] = from_double<T>(i < half ? static_cast<C>(a.start) + step * static_cast<C>(i)
                                                         : static_cast<C>(a.stop) - step * static_cast<C>(n - 1 - i));
                      } else {
                        const double step = (a.stop - a.start) / static_cast<double>(n - 1);
                        for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(a.start + step * static_cast<double>(i));
                      }
                    });
                  }});
    return q;
  }();
  return p;
}

const Primitive& dim_value_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<DimValueAttrs> spec;
    spec.name = "dim_value";
    spec.num_inputs = 0;
    spec.infer = [](const DimValueAttrs& a, std::span<const TensorType>, OutTypes& out) {
      SPORE_CHECK(is_symbolic(a.value) || a.value >= 0, "[dim_value] value is ", a.value, "; a size is >= 0");
      SPORE_CHECK(is_floating(a.dtype) || is_integral(a.dtype), "[dim_value] dtype is ",
                  dtype_name(a.dtype), "; a size is held as a number (float64, int64, ...)");
      out.add(a.dtype, {});
    };
    spec.cost = [](const DimValueAttrs& a, std::span<const TensorType>, std::span<const TensorType>) {
      return Cost{0, static_cast<double>(dtype_size(a.dtype))};
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu",
                  .run = [](const void* attrs, std::span<const Buffer>, std::span<const Buffer> out, const KernelContext&) {
                    const auto& a = *static_cast<const DimValueAttrs*>(attrs);
                    SPORE_CHECK(!is_symbolic(a.value), "[dim_value] ran with an unbound symbolic size");
                    visit_dtype(a.dtype, [&](auto tag) {
                      using T = decltype(tag);
                      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) *out[0].ptr<T>() = static_cast<T>(a.value);
                      else *out[0].ptr<T>() = from_double<T>(static_cast<double>(a.value));
                    });
                  }});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (fill_def(), arange_def(), linspace_def(), dim_value_def(), true);

}  // namespace

const Primitive& fill_primitive() { return fill_def(); }
const Primitive& arange_primitive() { return arange_def(); }
const Primitive& linspace_primitive() { return linspace_def(); }
const Primitive& dim_value_primitive() { return dim_value_def(); }

}  // namespace spore::prims
