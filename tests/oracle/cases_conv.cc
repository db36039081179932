// SPDX-License-Identifier: Apache-2.0
// Oracle cases for convolutions (conv1d/2d/3d, conv_transpose2d) and 2-D pools. float32 runs
// on oneDNN, float64 on the reference kernel: both must agree with PyTorch.
#include <cmath>

#include "oracle.h"

namespace spore::oracle {
namespace {

using IV = std::vector<int64_t>;

struct ConvCase {
  Shape x, w;
  ops::ConvOptions o;
  bool bias = true;
};

CaseOptions conv_tol(DType dt, const Shape& w) {
  if (dt != DType::Float32) return {};
  double k = 1;
  for (size_t i = 1; i < w.size(); ++i) k *= static_cast<double>(w[i]);
  return {.rtol = 1e-4, .atol = 1e-5 * std::sqrt(k)};
}

Attrs conv_attrs(const ops::ConvOptions& o, int64_t nsp) {
  auto expand = [&](const IV& v) { return v.size() == 1 ? IV(static_cast<size_t>(nsp), v[0]) : v; };
  return {{"stride", expand(o.stride)}, {"padding", expand(o.padding)}, {"dilation", expand(o.dilation)},
          {"groups", o.groups}, {"same", o.same}};
}

ops::ConvOptions opt(IV stride, IV padding, IV dilation = {1}, int64_t groups = 1, bool same = false) {
  return {stride, padding, dilation, groups, same};
}

}  // namespace

SPORE_ORACLE_FAMILY(conv) {
  uint64_t seed = 5000;
  auto conv_case = [&](const char* name, auto fn, const ConvCase& c, DType dt, bool strided = false) {
    Tensor x = rand_tensor(c.x, dt, seed++), wt = rand_tensor(c.w, dt, seed++), b = rand_tensor({c.w[0]}, dt, seed++);
    if (strided) x = non_contiguous(x);
    std::vector<Tensor> ins = {x, wt};
    if (c.bias) ins.push_back(b);
    Tensor y = fn(x, wt, c.bias ? b : Tensor(), c.o);
    w.add(name, ins, {y}, conv_attrs(c.o, static_cast<int64_t>(c.w.size()) - 2), conv_tol(dt, c.w));
  };
  const std::vector<ConvCase> c2 = {
      {{2, 3, 8, 9}, {4, 3, 3, 3}, opt({1}, {0})},
      {{2, 3, 8, 9}, {4, 3, 3, 3}, opt({1}, {0}), false},
      {{2, 3, 9, 9}, {5, 3, 3, 3}, opt({2}, {1})},
      {{1, 3, 10, 7}, {4, 3, 3, 2}, opt({2, 1}, {1, 0})},
      {{2, 3, 8, 8}, {4, 3, 4, 4}, opt({1}, {0}, {1}, 1, true)},
      {{2, 3, 9, 9}, {4, 3, 3, 3}, opt({1}, {2}, {2})},
      {{2, 4, 7, 7}, {6, 2, 3, 3}, opt({1}, {1}, {1}, 2)},
      {{2, 6, 7, 7}, {6, 1, 3, 3}, opt({1}, {1}, {1}, 6)},
      {{2, 8, 5, 5}, {16, 8, 1, 1}, opt({1}, {0})},
      {{1, 16, 14, 14}, {32, 16, 3, 3}, opt({1}, {1})},
      {{2, 3, 7, 7}, {4, 3, 2, 3}, opt({1}, {0}, {2, 1}, 1, true)},
      {{0, 3, 7, 7}, {4, 3, 3, 3}, opt({1}, {0})},
  };
  for (DType dt : {DType::Float32, DType::Float64})
    for (const auto& c : c2) conv_case("conv2d", ops::conv2d, c, dt);
  for (DType dt : {DType::BFloat16, DType::Float16}) {
    conv_case("conv2d", ops::conv2d, c2[2], dt);
    conv_case("conv2d", ops::conv2d, c2[6], dt);
  }
  conv_case("conv2d", ops::conv2d, c2[2], DType::Float32, true);
  conv_case("conv2d", ops::conv2d, c2[6], DType::Float64, true);
  conv_case("conv2d", ops::conv2d, {{3, 8, 9}, {4, 3, 3, 3}, opt({1}, {1})}, DType::Float32);  // unbatched
  {  // stride-0 (expanded) input and a transposed weight: oneDNN gets strided user memory
    Tensor x = rand_tensor({1, 3, 8, 8}, DType::Float32, seed++).expand({2, 3, 8, 8});
    Tensor wt = rand_tensor({4, 3, 3, 3}, DType::Float32, seed++).transpose(2, 3);
    w.add("conv2d", {x, wt}, {ops::conv2d(x, wt, {}, opt({1}, {1}))}, conv_attrs(opt({1}, {1}), 2),
          conv_tol(DType::Float32, wt.shape()));
  }
  const std::vector<ConvCase> c1 = {
      {{2, 3, 10}, {4, 3, 3}, opt({1}, {0})},        {{2, 3, 11}, {4, 3, 3}, opt({2}, {1})},
      {{2, 3, 10}, {4, 3, 4}, opt({1}, {0}, {1}, 1, true)}, {{2, 3, 12}, {4, 3, 3}, opt({1}, {1}, {3})},
      {{2, 4, 10}, {8, 2, 3}, opt({1}, {1}, {1}, 2), false},
  };
  for (DType dt : {DType::Float32, DType::Float64})
    for (const auto& c : c1) conv_case("conv1d", ops::conv1d, c, dt);
  conv_case("conv1d", ops::conv1d, c1[1], DType::BFloat16);
  const std::vector<ConvCase> c3 = {
      {{1, 2, 5, 6, 7}, {3, 2, 3, 3, 3}, opt({1}, {1})},
      {{2, 2, 6, 6, 6}, {4, 2, 3, 3, 3}, opt({2}, {0})},
      {{1, 4, 5, 5, 5}, {4, 2, 2, 3, 3}, opt({1}, {0}, {1}, 2, true)},
      {{1, 2, 7, 7, 7}, {2, 2, 3, 3, 3}, opt({1}, {1}, {2}), false},
  };
  for (DType dt : {DType::Float32, DType::Float64})
    for (const auto& c : c3) conv_case("conv3d", ops::conv3d, c, dt);

  // conv_transpose2d: weight (in, out/groups, kh, kw).
  struct TCase {
    Shape x, w;
    ops::ConvOptions o;
    IV output_padding;
    bool bias = true;
  };
  const std::vector<TCase> ct = {
      {{2, 3, 5, 5}, {3, 4, 3, 3}, opt({1}, {0}), {0}},
      {{2, 3, 5, 6}, {3, 4, 3, 3}, opt({2}, {1}), {1}},
      {{2, 4, 5, 5}, {4, 3, 3, 3}, opt({2}, {0}, {1}, 2), {0}, false},
      {{1, 2, 4, 4}, {2, 2, 3, 2}, opt({1}, {1}, {2}), {0}},
      {{1, 2, 4, 4}, {2, 3, 3, 3}, opt({3, 2}, {0, 1}), {2, 1}},
      {{1, 2, 4, 4}, {2, 3, 3, 3}, opt({2}, {0}), {1}},
  };
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16})
    for (const auto& c : ct) {
      if (dt == DType::BFloat16 && c.x[0] == 1) continue;  // bf16: the first three cases suffice
      Tensor x = rand_tensor(c.x, dt, seed++), wt = rand_tensor(c.w, dt, seed++);
      Tensor b = rand_tensor({c.w[1] * c.o.groups}, dt, seed++);
      std::vector<Tensor> ins = {x, wt};
      if (c.bias) ins.push_back(b);
      Tensor y = ops::conv_transpose2d(x, wt, c.bias ? b : Tensor(), c.o, c.output_padding);
      Attrs at = conv_attrs(c.o, 2);
      at.push_back({"output_padding", c.output_padding.size() == 1 ? IV{c.output_padding[0], c.output_padding[0]}
                                                                   : c.output_padding});
      w.add("conv_transpose2d", ins, {y}, at, conv_tol(dt, Shape{c.w[1], c.w[0], c.w[2], c.w[3]}));
    }

  // Pools: kernel, stride, padding, ceil_mode, count_include_pad; with indices; adaptive.
  struct PCase {
    Shape x;
    ops::PoolOptions o;
  };
  auto po = [](IV k, IV s, IV p, bool ceil = false, bool cip = true) { return ops::PoolOptions{k, s, p, ceil, cip}; };
  const std::vector<PCase> pc = {
      {{2, 3, 8, 8}, po({2}, {}, {0})},         {{2, 3, 9, 9}, po({3}, {2}, {1})},
      {{1, 2, 10, 7}, po({3, 2}, {2, 1}, {1, 0})}, {{2, 3, 9, 9}, po({3}, {2}, {0}, true)},
      {{2, 3, 10, 10}, po({3}, {2}, {1}, true)}, {{2, 3, 8, 8}, po({2}, {2}, {1}, false, false)},
      {{2, 3, 11, 11}, po({4}, {3}, {2}, true, false)}, {{3, 6, 6}, po({2}, {}, {0})},
      {{1, 1, 5, 5}, po({5}, {1}, {2}, true, true)},
  };
  auto pool_attrs = [](const ops::PoolOptions& o) -> Attrs {
    return {{"kernel", o.kernel}, {"stride", o.stride}, {"padding", o.padding}, {"ceil_mode", o.ceil_mode},
            {"count_include_pad", o.count_include_pad}};
  };
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16, DType::Float16})
    for (const auto& c : pc) {
      Tensor x = rand_tensor(c.x, dt, seed++, dt == DType::Float32 ? Fill::Edge : Fill::Normal);
      w.add("max_pool2d", {x}, {ops::max_pool2d(x, c.o)}, pool_attrs(c.o));
      auto [v, idx] = ops::max_pool2d_with_indices(x, c.o);
      w.add("max_pool2d_with_indices", {x}, {v, idx}, pool_attrs(c.o));
      w.add("avg_pool2d", {x}, {ops::avg_pool2d(x, c.o)}, pool_attrs(c.o));
    }
  Tensor xs = non_contiguous(rand_tensor({2, 3, 9, 9}, DType::Float32, seed++));
  w.add("max_pool2d", {xs}, {ops::max_pool2d(xs, pc[1].o)}, pool_attrs(pc[1].o));
  w.add("avg_pool2d", {xs}, {ops::avg_pool2d(xs, pc[4].o)}, pool_attrs(pc[4].o));
  auto [v, idx] = ops::max_pool2d_with_indices(xs, pc[1].o);
  w.add("max_pool2d_with_indices", {xs}, {v, idx}, pool_attrs(pc[1].o));
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16})
    for (auto [shape, osz] : std::vector<std::pair<Shape, IV>>{
             {{2, 3, 8, 8}, {4, 4}}, {{2, 3, 7, 9}, {3, 4}}, {{1, 2, 5, 5}, {1, 1}}, {{1, 2, 4, 4}, {6, 5}}, {{3, 5, 5}, {2, 3}}}) {
      Tensor x = rand_tensor(shape, dt, seed++);
      w.add("adaptive_avg_pool2d", {x}, {ops::adaptive_avg_pool2d(x, {osz[0], osz[1]})}, {{"output_size", osz}});
    }
}

}  // namespace spore::oracle
