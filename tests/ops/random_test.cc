// SPDX-License-Identifier: Apache-2.0
// Random ops: Philox known answers, determinism, independence from the thread count, generator
// offsets, errors, and statistics with tolerances of about 5 standard errors for the sample size.
#include <gtest/gtest.h>

#include "error_matchers.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>

#include <spore/spore.h>

#include "backends/cpu/philox.h"

namespace spore {
namespace {

using namespace ops;

constexpr int64_t kN = 1000000;

TEST(RandomPhilox, KnownAnswer) {
  // Random123's kat_vectors for philox4x32_10.
  EXPECT_EQ(cpu::philox4x32_10({0, 0, 0, 0}, 0, 0), (cpu::PhiloxBlock{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  const uint32_t f = 0xffffffffu;
  EXPECT_EQ(cpu::philox4x32_10({f, f, f, f}, f, f), (cpu::PhiloxBlock{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
}

TEST(RandomGenerator, OffsetAdvance) {
  manual_seed(7);
  EXPECT_EQ(default_generator().seed(), 7u);
  EXPECT_EQ(default_generator().offset(), 0u);
  uniform({5});
  EXPECT_EQ(default_generator().offset(), 8u);  // rounded up to 4
  normal({2, 2});
  EXPECT_EQ(default_generator().offset(), 12u);
  permutation(3);
  bernoulli(full({2}, 0.5));
  randint(0, 4, {9});
  dropout(ones({4}), 0.5);
  EXPECT_EQ(default_generator().offset(), 36u);
  dropout(ones({4}), 0.5, false);  // nothing drawn in eval mode
  EXPECT_EQ(default_generator().offset(), 36u);
  Generator g(3);
  EXPECT_EQ(g.next(1).offset, 0u);
  EXPECT_EQ(g.next(0).offset, 4u);
  EXPECT_EQ(g.offset(), 4u);
}

TEST(RandomDeterminism, SameSeedSameValues) {
  manual_seed(11);
  Tensor a = normal({257});
  Tensor ai = randint(0, 1000, {100});
  manual_seed(11);
  Tensor b = normal({257});
  Tensor bi = randint(0, 1000, {100});
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  EXPECT_EQ(ai.to_vector<int64_t>(), bi.to_vector<int64_t>());
  manual_seed(12);
  EXPECT_NE(a.to_vector<float>(), normal({257}).to_vector<float>());
}

TEST(RandomDeterminism, PureFunctionOfKeyAndIndex) {
  Tensor a = uniform({8}, 0, 1, {DType::Float64}, {5, 0});
  Tensor b = uniform({8}, 0, 1, {DType::Float64}, {5, 0});
  Tensor c = uniform({4}, 0, 1, {DType::Float64}, {5, 4});
  Tensor d = uniform({8}, 0, 1, {DType::Float64}, {6, 0});
  auto va = a.to_vector<double>(), vc = c.to_vector<double>();
  EXPECT_EQ(va, b.to_vector<double>());
  // Element i uses counter offset + i: offset 4 continues the stream of offset 0.
  EXPECT_EQ(std::vector<double>(va.begin() + 4, va.end()), vc);
  EXPECT_NE(va, d.to_vector<double>());
  EXPECT_NE(std::vector<double>(va.begin(), va.begin() + 4), vc);
  EXPECT_EQ(normal({3}, 0, 1, {}, {1, 2}).to_vector<float>(), normal({3}, 0, 1, {}, {1, 2}).to_vector<float>());
}

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.contiguous().data_ptr(), b.contiguous().data_ptr(), a.numel() * a.itemsize()) == 0;
}

TEST(RandomThreads, BitwiseIdenticalForOneAndTwoThreads) {
  const int saved = num_threads();
  std::vector<std::pair<const char*, std::function<Tensor()>>> ops = {
      {"uniform f32", [] { return uniform({kN}); }},
      {"uniform f64", [] { return uniform({kN}, -2, 3, {DType::Float64}); }},
      {"uniform bf16", [] { return uniform({kN}, 0, 1, {DType::BFloat16}); }},
      {"normal f32", [] { return normal({kN}, 1, 2); }},
      {"normal f16", [] { return normal({kN}, 0, 1, {DType::Float16}); }},
      {"truncated_normal", [] { return truncated_normal({kN}, 0, 1, -1, 2, {DType::Float64}); }},
      {"bernoulli p", [] { return bernoulli({kN}, 0.3); }},
      {"bernoulli tensor", [] { return bernoulli(uniform({1000, 1000}, 0, 1, {}, {9, 9}).transpose(0, 1)); }},
      {"randint", [] { return randint(-5, 1000003, {kN}); }},
      {"permutation", [] { return permutation(kN); }},
      {"dropout", [] { return dropout(ones({1000, 1000}).transpose(0, 1), 0.4); }},
  };
  for (auto& [name, fn] : ops) {
    set_num_threads(1);
    manual_seed(2024);
    Tensor one = fn();
    set_num_threads(2);
    manual_seed(2024);
    Tensor two = fn();
    EXPECT_TRUE(bitwise_equal(one, two)) << name;
  }
  set_num_threads(saved);
}

struct Moments {
  double mean = 0, var = 0, min = 0, max = 0;
};
Moments moments(const std::vector<double>& v) {
  Moments m;
  m.mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  for (double x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= v.size();
  m.min = *std::min_element(v.begin(), v.end());
  m.max = *std::max_element(v.begin(), v.end());
  return m;
}
double phi_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double phi_pdf(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI); }
// Kolmogorov-Smirnov statistic against `cdf`; 1.95 / sqrt(n) is the 0.1% critical value.
double ks(std::vector<double> v, const std::function<double(double)>& cdf) {
  std::sort(v.begin(), v.end());
  double d = 0, n = static_cast<double>(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    double f = cdf(v[i]);
    d = std::max({d, std::abs(f - i / n), std::abs((i + 1) / n - f)});
  }
  return d;
}

TEST(RandomStats, Uniform) {
  manual_seed(1);
  auto v = uniform({kN}, 0, 1, {DType::Float64}).to_vector<double>();
  Moments m = moments(v);
  const double se_mean = std::sqrt(1.0 / 12 / kN), se_var = std::sqrt((1.0 / 80 - 1.0 / 144) / kN);
  EXPECT_NEAR(m.mean, 0.5, 5 * se_mean);
  EXPECT_NEAR(m.var, 1.0 / 12, 5 * se_var);
  EXPECT_GE(m.min, 0.0);
  EXPECT_LT(m.max, 1.0);
  EXPECT_LT(ks(v, [](double x) { return x; }), 1.95 / std::sqrt(kN));
  auto f = uniform({kN}, -3, 5).to_vector<double>();
  Moments mf = moments(f);
  EXPECT_NEAR(mf.mean, 1.0, 5 * 8 * se_mean);
  EXPECT_GE(mf.min, -3.0);
  EXPECT_LT(mf.max, 5.0);
  // 16-bit results stay below high even where rounding would reach it.
  auto h = uniform({100000}, 0, 1, {DType::BFloat16}).to_vector<float>();
  EXPECT_LT(*std::max_element(h.begin(), h.end()), 1.0f);
  EXPECT_EQ(uniform({3}, 2, 2).to_vector<float>(), (std::vector<float>{2, 2, 2}));
}

TEST(RandomStats, Normal) {
  manual_seed(2);
  auto v = normal({kN}, 0, 1, {DType::Float64}).to_vector<double>();
  Moments m = moments(v);
  EXPECT_NEAR(m.mean, 0.0, 5 / std::sqrt(kN));
  EXPECT_NEAR(std::sqrt(m.var), 1.0, 5 / std::sqrt(2.0 * kN));
  EXPECT_LT(ks(v, phi_cdf), 1.95 / std::sqrt(kN));
  auto w = normal({kN}, 2, 3).to_vector<double>();
  Moments mw = moments(w);
  EXPECT_NEAR(mw.mean, 2.0, 5 * 3 / std::sqrt(kN));
  EXPECT_NEAR(std::sqrt(mw.var), 3.0, 5 * 3 / std::sqrt(2.0 * kN));
  EXPECT_LT(ks(w, [](double x) { return phi_cdf((x - 2) / 3); }), 1.95 / std::sqrt(kN));
}

TEST(RandomStats, TruncatedNormal) {
  manual_seed(3);
  const double a = -1, b = 2;
  auto v = truncated_normal({kN}, 0, 1, a, b, {DType::Float64}).to_vector<double>();
  Moments m = moments(v);
  const double z = phi_cdf(b) - phi_cdf(a);
  const double mean = (phi_pdf(a) - phi_pdf(b)) / z;
  EXPECT_GE(m.min, a);
  EXPECT_LE(m.max, b);
  EXPECT_NEAR(m.mean, mean, 5 / std::sqrt(kN));
  EXPECT_LT(ks(v, [&](double x) { return (phi_cdf(x) - phi_cdf(a)) / z; }), 1.95 / std::sqrt(kN));
  // Shifted and scaled, float32: bounds are in value space.
  auto w = truncated_normal({kN}, 1, 2, 0, 3).to_vector<double>();
  Moments mw = moments(w);
  const double al = -0.5, be = 1.0, zw = phi_cdf(be) - phi_cdf(al);
  EXPECT_GE(mw.min, 0.0);
  EXPECT_LE(mw.max, 3.0);
  EXPECT_NEAR(mw.mean, 1 + 2 * (phi_pdf(al) - phi_pdf(be)) / zw, 5 * 2 / std::sqrt(kN));
  // A far tail, where naive inverse-CDF sampling would collapse to the bound.
  auto t = truncated_normal({100000}, 0, 1, 6, 7, {DType::Float64}).to_vector<double>();
  Moments mt = moments(t);
  const double zt = std::erfc(6 / std::sqrt(2.0)) / 2 - std::erfc(7 / std::sqrt(2.0)) / 2;
  EXPECT_GE(mt.min, 6.0);
  EXPECT_LE(mt.max, 7.0);
  EXPECT_NEAR(mt.mean, (phi_pdf(6) - phi_pdf(7)) / zt, 5 * 0.2 / std::sqrt(100000.0));
  EXPECT_GT(mt.max - mt.min, 0.5);
}

TEST(RandomStats, Bernoulli) {
  manual_seed(4);
  auto v = bernoulli({kN}, 0.3).to_vector<double>();
  EXPECT_NEAR(moments(v).mean, 0.3, 5 * std::sqrt(0.21 / kN));
  for (double x : v) ASSERT_TRUE(x == 0 || x == 1);
  EXPECT_EQ(bernoulli({5}, 0.0).to_vector<float>(), std::vector<float>(5, 0.f));
  EXPECT_EQ(bernoulli({5}, 1.0, {DType::Int32}).to_vector<int>(), std::vector<int>(5, 1));
  // Tensor form: two halves with different probabilities; dtype and shape follow p.
  Tensor p = where(less(arange(0, kN, 1), full({}, kN / 2, {DType::Int64})), full({kN}, 0.1), full({kN}, 0.8));
  Tensor r = bernoulli(p.to(DType::Float64));
  EXPECT_EQ(r.dtype(), DType::Float64);
  auto rv = r.to_vector<double>();
  std::vector<double> lo(rv.begin(), rv.begin() + kN / 2), hi(rv.begin() + kN / 2, rv.end());
  EXPECT_NEAR(moments(lo).mean, 0.1, 5 * std::sqrt(0.09 / (kN / 2)));
  EXPECT_NEAR(moments(hi).mean, 0.8, 5 * std::sqrt(0.16 / (kN / 2)));
}

TEST(RandomStats, RandInt) {
  manual_seed(5);
  auto v = randint(-3, 7, {kN}).to_vector<int64_t>();
  std::vector<double> count(10, 0);
  for (int64_t x : v) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 7);
    count[x + 3] += 1;
  }
  double chi2 = 0, e = kN / 10.0;
  for (double c : count) chi2 += (c - e) * (c - e) / e;
  EXPECT_LT(chi2, 27.88);  // chi-square, 9 degrees of freedom, 0.1%
  EXPECT_EQ(randint(0, 200, {4}, {DType::UInt8}).dtype(), DType::UInt8);
  // A range of 3 * 2^61: plain x mod range would put half the draws below 2^62 (not 2/3).
  const int64_t big = int64_t{3} << 61;
  auto w = randint(0, big, {200000}).to_vector<int64_t>();
  double below = 0;
  for (int64_t x : w) {
    ASSERT_GE(x, 0);
    ASSERT_LT(x, big);
    below += x < (int64_t{1} << 62);
  }
  EXPECT_NEAR(below / w.size(), 2.0 / 3, 5 * std::sqrt(2.0 / 9 / w.size()));
  // The full int64 range.
  auto f = randint(INT64_MIN, INT64_MAX, {100000}).to_vector<int64_t>();
  double neg = 0;
  for (int64_t x : f) neg += x < 0;
  EXPECT_NEAR(neg / f.size(), 0.5, 5 * std::sqrt(0.25 / f.size()));
}

TEST(RandomStats, Permutation) {
  manual_seed(6);
  auto v = permutation(kN).to_vector<int64_t>();
  auto s = v;
  std::sort(s.begin(), s.end());
  for (int64_t i = 0; i < kN; ++i) ASSERT_EQ(s[i], i);
  int64_t fixed = 0;
  for (int64_t i = 0; i < kN; ++i) fixed += v[i] == i;
  EXPECT_LT(fixed, 10);  // about 1 fixed point is expected
  EXPECT_EQ(permutation(0).numel(), 0);
  EXPECT_EQ(permutation(1).to_vector<int64_t>(), (std::vector<int64_t>{0}));
  EXPECT_EQ(permutation(5, {DType::Int32}).dtype(), DType::Int32);
}


TEST(RandomErrors, Messages) {
  expect_error([] { uniform({2}, 1, 0); }, "[uniform] needs finite low <= high, got low 1, high 0");
  expect_error([] { uniform({2}, -1e308, 1e308, {DType::Float64}); }, "[uniform] high - low overflows");
  expect_error([] { uniform({2}, 0, 1, {DType::Int32}); }, "[uniform] needs a floating dtype, got int32");
  expect_error([] { normal({2}, 0, 1, {DType::Int64}); }, "[normal] needs a floating dtype, got int64");
  expect_error([] { normal({2}, 0, -1); }, "[normal] needs a finite mean and std >= 0");
  expect_error([] { truncated_normal({2}, 0, 1, 2, 1); }, "[truncated_normal] needs bounds a < b");
  expect_error([] { bernoulli({2}, 1.5); }, "[bernoulli] p must be in [0, 1], got 1.5");
  expect_error([] { bernoulli(tensor({0.5f, 1.5f})); }, "[bernoulli] probabilities must be in [0, 1]");
  expect_error([] { bernoulli(tensor({1, 0})); }, "[bernoulli] needs floating probabilities, got int64");
  expect_error([] { randint(3, 3, {2}); }, "[randint] needs low < high, got low 3, high 3");
  expect_error([] { randint(0, 300, {2}, {DType::UInt8}); }, "[randint] [0, 300) does not fit in uint8");
  expect_error([] { permutation(-1); }, "[permutation] n must be >= 0, got -1");
  expect_error([] { uniform({-1}); }, "[uniform] shape (-1,) has a negative dimension");
  // A refused call draws nothing.
  manual_seed(1);
  expect_error([] { randint(5, 1, {2}); }, "[randint]");
  EXPECT_EQ(default_generator().offset(), 0u);
}

TEST(Dropout, MaskRateAndScaling) {
  manual_seed(8);
  const int64_t n = 100000;
  const double p = 0.3;
  auto v = dropout(ones({n}), p).to_vector<float>();
  double zeros = 0;
  for (float x : v) {
    ASSERT_TRUE(x == 0.0f || x == static_cast<float>(1 / (1 - p))) << x;
    zeros += x == 0.0f;
  }
  EXPECT_NEAR(zeros / n, p, 5 * std::sqrt(p * (1 - p) / n));
  // The mask is bernoulli(p) drawn with the same key.
  manual_seed(9);
  Tensor d = dropout(full({1000}, 2.0, {DType::Float64}), 0.25);
  manual_seed(9);
  auto m = bernoulli({1000}, 0.25, {DType::Float64}).to_vector<double>();
  auto dv = d.to_vector<double>();
  for (size_t i = 0; i < m.size(); ++i) ASSERT_EQ(dv[i], m[i] ? 0.0 : 2.0 / 0.75);
}

TEST(Dropout, SpecialCases) {
  Tensor x = normal({4, 5});
  EXPECT_TRUE(dropout(x, 0.0).is_same(x));
  EXPECT_TRUE(dropout(x, 0.7, false).is_same(x));
  Tensor z = dropout(x, 1.0);
  EXPECT_EQ(z.shape(), x.shape());
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(20, 0.f));
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float64}) {
    Tensor y = dropout(ones({64}, {dt}), 0.5);
    EXPECT_EQ(y.dtype(), dt);
    for (float e : y.to_vector<float>()) ASSERT_TRUE(e == 0.0f || e == 2.0f);
  }
  // Strided input: the mask follows the logical (row-major) index.
  Tensor s = normal({30, 40}).transpose(0, 1);
  manual_seed(10);
  auto a = dropout(s, 0.5).to_vector<float>();
  manual_seed(10);
  auto b = dropout(s.contiguous(), 0.5).to_vector<float>();
  EXPECT_EQ(a, b);
}

TEST(Dropout, Errors) {
  expect_error([] { dropout(ones({2}), 1.5); }, "[dropout] p must be in [0, 1], got 1.5");
  expect_error([] { dropout(ones({2}), -0.1); }, "[dropout] p must be in [0, 1], got -0.1");
  expect_error([] { dropout(ones({2}, {DType::Int32}), 0.5); }, "[dropout] needs a floating tensor, got int32");
}

}  // namespace
}  // namespace spore
