// SPDX-License-Identifier: Apache-2.0
// Oracle cases for linalg: matmul (1-D, 2-D, N-D broadcast, strided, dtypes, empty), addmm,
// outer, einsum.
#include <cmath>

#include "oracle.h"

namespace spore::oracle {
namespace {

// float32 GEMMs accumulate in a different order than PyTorch's: allow ~sqrt(K) growth.
CaseOptions gemm_tol(DType dt, int64_t k) {
  if (dt != DType::Float32) return {};
  double s = std::sqrt(static_cast<double>(std::max<int64_t>(k, 1)));
  return {.rtol = 1e-4, .atol = 1e-5 * s};
}

Fill fill_for(DType dt) { return is_floating(dt) ? Fill::Normal : Fill::Int; }

}  // namespace

SPORE_ORACLE_FAMILY(linalg) {
  uint64_t seed = 1000;
  // (a shape, b shape)
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4}, {4, 5}},       {{7}, {7}},          {{7}, {7, 3}},        {{3, 7}, {7}},
      {{5}, {2, 5, 3}},       {{2, 3, 5}, {5}},    {{2, 1, 3, 4}, {5, 4, 6}}, {{3, 4}, {2, 4, 5}},
      {{2, 3, 4}, {4, 6}},    {{3, 0}, {0, 4}},    {{0, 5}, {5, 2}},     {{64, 300}, {300, 70}},
      {{1, 1}, {1, 1}},       {{4, 2, 8, 16}, {4, 2, 16, 8}},
  };
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16, DType::Float16, DType::Int64, DType::Int32}) {
    for (auto& [sa, sb] : shapes) {
      if (!is_floating(dt) && sa.size() > 0 && sa.back() == 300) continue;
      Tensor a = rand_tensor(sa, dt, seed++, fill_for(dt)), b = rand_tensor(sb, dt, seed++, fill_for(dt));
      w.add("matmul", {a, b}, {ops::matmul(a, b)}, {}, gemm_tol(dt, sa.back()));
    }
  }
  // Transposed and strided operands (oneDNN gets the strides; no copies).
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16}) {
    Tensor at = rand_tensor({9, 6}, dt, seed++).transpose(0, 1);  // (6, 9)
    Tensor bt = rand_tensor({5, 9}, dt, seed++).transpose(0, 1);  // (9, 5)
    w.add("matmul", {at, bt}, {ops::matmul(at, bt)}, {}, gemm_tol(dt, 9));
    Tensor an = non_contiguous(rand_tensor({4, 6, 9}, dt, seed++));
    Tensor bn = non_contiguous(rand_tensor({9, 3}, dt, seed++));
    w.add("matmul", {an, bn}, {ops::matmul(an, bn)}, {}, gemm_tol(dt, 9));
    Tensor ab = rand_tensor({1, 6, 9}, dt, seed++).expand({3, 6, 9});  // stride-0 batch
    Tensor bb = rand_tensor({3, 9, 2}, dt, seed++);
    w.add("matmul", {ab, bb}, {ops::matmul(ab, bb)}, {}, gemm_tol(dt, 9));
    Tensor bh = rand_tensor({2, 3, 9, 5}, dt, seed++).permute({1, 0, 3, 2});  // (3, 2, 5, 9)
    Tensor ah = rand_tensor({3, 2, 4, 5}, dt, seed++);
    w.add("matmul", {ah, bh}, {ops::matmul(ah, bh)}, {}, gemm_tol(dt, 5));
  }
  // Mixed dtypes promote.
  {
    Tensor a = rand_tensor({3, 4}, DType::Int64, seed++, Fill::Int), b = rand_tensor({4, 2}, DType::Float32, seed++);
    w.add("matmul", {a, b}, {ops::matmul(a, b)});
  }
  // addmm: bias shapes, alpha/beta, beta = 0 ignores NaN in the bias.
  const std::vector<Shape> bias_shapes = {{3, 5}, {5}, {1, 5}, {3, 1}, {}};
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16}) {
    for (const Shape& bs : bias_shapes)
      for (auto [beta, alpha] : {std::pair{1.0, 1.0}, std::pair{0.5, 2.0}, std::pair{-1.0, 0.25}}) {
        Tensor c = rand_tensor(bs, dt, seed++), a = rand_tensor({3, 7}, dt, seed++), b = rand_tensor({7, 5}, dt, seed++);
        w.add("addmm", {c, a, b}, {ops::addmm(c, a, b, beta, alpha)}, {{"beta", beta}, {"alpha", alpha}},
              gemm_tol(dt, 7));
      }
    Tensor c = ops::full({3, 5}, NAN, {dt}), a = rand_tensor({3, 7}, dt, seed++), b = rand_tensor({7, 5}, dt, seed++);
    w.add("addmm", {c, a, b}, {ops::addmm(c, a, b, 0.0, 1.5)}, {{"beta", 0.0}, {"alpha", 1.5}}, gemm_tol(dt, 7));
    Tensor at = rand_tensor({7, 3}, dt, seed++).transpose(0, 1), b2 = rand_tensor({7, 5}, dt, seed++);
    Tensor c2 = rand_tensor({5}, dt, seed++);
    w.add("addmm", {c2, at, b2}, {ops::addmm(c2, at, b2)}, {{"beta", 1.0}, {"alpha", 1.0}}, gemm_tol(dt, 7));
    Tensor ct = rand_tensor({5, 3}, dt, seed++).transpose(0, 1);  // strided 2-D bias
    w.add("addmm", {ct, at, b2}, {ops::addmm(ct, at, b2, 0.5, 2.0)}, {{"beta", 0.5}, {"alpha", 2.0}}, gemm_tol(dt, 7));
  }
  {
    Tensor c = rand_tensor({4}, DType::Int64, seed++, Fill::Int), a = rand_tensor({2, 3}, DType::Int64, seed++, Fill::Int);
    Tensor b = rand_tensor({3, 4}, DType::Int64, seed++, Fill::Int);
    w.add("addmm", {c, a, b}, {ops::addmm(c, a, b, 2, 3)}, {{"beta", int64_t{2}}, {"alpha", int64_t{3}}});
  }
  for (DType dt : {DType::Float32, DType::Float64, DType::Int64, DType::Float16}) {
    Tensor a = rand_tensor({5}, dt, seed++, fill_for(dt)), b = rand_tensor({7}, dt, seed++, fill_for(dt));
    w.add("outer", {a, b}, {ops::outer(a, b)});
  }
  // einsum
  struct E {
    const char* eq;
    std::vector<Shape> shapes;
  };
  const std::vector<E> eqs = {
      {"ii->i", {{4, 4}}},           {"ii->", {{5, 5}}},          {"ij->ji", {{3, 5}}},
      {"ij,jk->ik", {{3, 4}, {4, 5}}}, {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}}, {"i,i->", {{6}, {6}}},
      {"ij,j->i", {{3, 4}, {4}}},    {"bhqd,bhkd->bhqk", {{2, 3, 5, 8}, {2, 3, 6, 8}}},
      {"ij->", {{3, 4}}},            {"ij->j", {{3, 4}}},         {"i,j->ij", {{3}, {4}}},
      {"ij,jk", {{3, 4}, {4, 5}}},   {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}}, {"iij->j", {{3, 3, 4}}},
      {"bhqk,bhkd->bhqd", {{2, 2, 5, 6}, {2, 2, 6, 4}}}, {"ij,ij->ij", {{3, 4}, {3, 4}}},
  };
  for (DType dt : {DType::Float32, DType::Float64})
    for (const E& e : eqs) {
      std::vector<Tensor> ins;
      for (const Shape& s : e.shapes) ins.push_back(rand_tensor(s, dt, seed++));
      w.add("einsum", ins, {ops::einsum(e.eq, ins)}, {{"equation", std::string(e.eq)}}, gemm_tol(dt, 8));
    }
  {
    Tensor a = rand_tensor({3, 4}, DType::Int64, seed++, Fill::Int), b = rand_tensor({4, 2}, DType::Int64, seed++, Fill::Int);
    w.add("einsum", {a, b}, {ops::einsum("ij,jk->ik", {a, b})}, {{"equation", std::string("ij,jk->ik")}});
    Tensor at = rand_tensor({6, 3}, DType::Float32, seed++).transpose(0, 1);
    w.add("einsum", {at}, {ops::einsum("ij->j", {at})}, {{"equation", std::string("ij->j")}});
  }
}

}  // namespace spore::oracle
