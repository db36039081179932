// SPDX-License-Identifier: Apache-2.0
// Oracle cases for random ops: Spore's samples cannot equal PyTorch's (different generators),
// so the Python side draws its own sample of the same distribution and check.py compares dtype,
// shape, mean, std, min and max (attribute _stat_atol), or the sorted values for permutation.
// Exact determinism and finer statistics live in tests/ops/random_test.cc.
#include "oracle.h"

namespace spore::oracle {

SPORE_ORACLE_FAMILY(random) {
  using namespace ops;
  manual_seed(1234);
  const int64_t n = 200000;
  for (DType dt : kFloatTypes) {
    std::string name(dtype_name(dt));
    w.add("uniform", {}, {uniform({n}, -2.0, 3.0, {dt})}, {{"n", n}, {"low", -2.0}, {"high", 3.0}, {"dtype", name}, {"_stat_atol", 0.03}});
    w.add("normal", {}, {normal({n / 2, 2}, 1.5, 2.0, {dt})}, {{"shape", std::vector<int64_t>{n / 2, 2}}, {"mean", 1.5}, {"std", 2.0}, {"dtype", name}, {"_stat_atol", 0.15}});
    w.add("truncated_normal", {}, {truncated_normal({n}, 0.0, 1.0, -1.0, 2.0, {dt})},
          {{"n", n}, {"mean", 0.0}, {"std", 1.0}, {"a", -1.0}, {"b", 2.0}, {"dtype", name}, {"_stat_atol", 0.03}});
    w.add("bernoulli_p", {}, {bernoulli({n}, 0.3, {dt})}, {{"n", n}, {"p", 0.3}, {"dtype", name}, {"_stat_atol", 0.02}});
    Tensor p = uniform({n}, 0.0, 1.0, {dt});
    w.add("bernoulli", {p}, {bernoulli(p)}, {{"_stat_atol", 0.02}});
    Tensor x = ones({n / 4, 4}, {dt});
    w.add("dropout", {x}, {dropout(x, 0.25)}, {{"p", 0.25}, {"_stat_atol", 0.03}});
  }
  w.add("randint", {}, {randint(-5, 17, {n})}, {{"low", int64_t{-5}}, {"high", int64_t{17}}, {"n", n}, {"_stat_atol", 0.03}});
  w.add("randint", {}, {randint(0, 3, {n}, {DType::Int32, kCPU})},
        {{"low", int64_t{0}}, {"high", int64_t{3}}, {"n", n}, {"dtype", std::string("int32")}, {"_stat_atol", 0.03}});
  for (int64_t m : {int64_t{0}, int64_t{1}, int64_t{1000}})
    w.add("permutation", {}, {permutation(m)}, {{"n", m}, {"_sorted", true}});
}

}  // namespace spore::oracle
