// SPDX-License-Identifier: Apache-2.0
// Pipeline operations: batch, repeat, take/skip, zip, concat, split, shard.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "data/data_test_util.h"
#include "error_matchers.h"

namespace spore::data {
namespace {

using testing::collect;
using testing::counting;
using testing::firsts;

std::vector<int64_t> iota(int64_t a, int64_t b) {
  std::vector<int64_t> v;
  for (int64_t i = a; i < b; ++i) v.push_back(i);
  return v;
}

TEST(DataOps, BatchStacksAndKeepsOrDropsTheRemainder) {
  auto ds = counting(10)->batch(4);
  EXPECT_EQ(ds->size(), 3);
  const auto rows = collect(ds);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0][0], (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(rows[0][1], (std::vector<double>{0, 10, 20, 30}));
  EXPECT_EQ(rows[2][0], (std::vector<double>{8, 9}));
  auto dropped = counting(10)->batch(4, true);
  EXPECT_EQ(dropped->size(), 2);
  EXPECT_EQ(collect(dropped).size(), 2u);
  auto it = counting(10)->batch(4)->iterate();
  EXPECT_EQ((*it.next())[0].shape(), (Shape{4}));
  EXPECT_ERROR(counting(3)->batch(0), "[batch] size must be >= 1");
}

TEST(DataOps, BatchPadsRowsOfDifferentShapes) {
  auto gen = generator([](int64_t i) -> std::optional<Row> {
    if (i >= 3) return std::nullopt;
    std::vector<float> v(static_cast<size_t>(i + 1), static_cast<float>(i + 1));
    return Row{ops::from_vector(v)};
  });
  EXPECT_ERROR(collect(gen->batch(3)), "resize them to one shape (map) or pad them");
  const auto rows = collect(gen->batch(3, false, BatchPad{-1, {}}));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], (std::vector<double>{1, -1, -1, 2, 2, -1, 3, 3, 3}));
  auto it = gen->batch(2, false, BatchPad{0, Shape{4}})->iterate();
  const Row b0 = *it.next();
  EXPECT_EQ(b0[0].shape(), (Shape{2, 4}));
  EXPECT_EQ(b0[0].to_vector<double>(), (std::vector<double>{1, 0, 0, 0, 2, 2, 0, 0}));
  EXPECT_ERROR(collect(gen->batch(3, false, BatchPad{0, Shape{2}})), "larger than the pad shape");
}

TEST(DataOps, RepeatTakeSkip) {
  EXPECT_EQ(firsts(counting(3)->repeat(2)), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(counting(3)->repeat()->size(), -1);
  EXPECT_EQ(firsts(counting(3)->repeat()->take(7)), (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(firsts(counting(10)->take(4)), iota(0, 4));
  EXPECT_EQ(firsts(counting(10)->skip(7)), iota(7, 10));
  EXPECT_EQ(counting(10)->skip(12)->size(), 0);
  EXPECT_EQ(firsts(counting(10)->skip(12)), std::vector<int64_t>{});
  EXPECT_EQ(firsts(counting(10)->skip(2)->take(3)), iota(2, 5));
  EXPECT_EQ(counting(10)->take(30)->size(), 10);
  // The same over a streamed source.
  auto gen = generator([](int64_t i) -> std::optional<Row> {
    if (i >= 10) return std::nullopt;
    return Row{ops::scalar_tensor(i, DType::Int64)};
  });
  EXPECT_EQ(firsts(gen->skip(2)->take(3)), iota(2, 5));
  EXPECT_EQ(firsts(gen->batch(3)->take(2)), iota(0, 6));
  EXPECT_EQ(firsts(counting(0)->repeat()), std::vector<int64_t>{});
}

TEST(DataOps, ZipJoinsColumns) {
  auto a = counting(5);
  auto b = counting(3)->map({type_cast(DType::Float32, 0.5)}, 0);
  auto z = a->zip(b);
  EXPECT_EQ(z->size(), 3);
  const auto rows = collect(z);
  ASSERT_EQ(rows.size(), 3u);
  ASSERT_EQ(rows[2].size(), 4u);
  EXPECT_EQ(rows[2][0], (std::vector<double>{2}));
  EXPECT_EQ(rows[2][2], (std::vector<double>{1.0}));
  // Streamed on one side, random-access on the other.
  auto gen = generator([](int64_t i) -> std::optional<Row> {
    if (i >= 4) return std::nullopt;
    return Row{ops::scalar_tensor(100 + i, DType::Int64)};
  });
  const auto zr = collect(counting(10)->zip(gen)->batch(3));
  ASSERT_EQ(zr.size(), 2u);
  EXPECT_EQ(zr[1][2], (std::vector<double>{103}));
}

TEST(DataOps, ConcatAppendsAndShufflesAcross) {
  auto c = counting(3)->concat(counting(2));
  EXPECT_EQ(c->size(), 5);
  EXPECT_EQ(firsts(c), (std::vector<int64_t>{0, 1, 2, 0, 1}));
  auto s = counting(50)->concat(counting(50)->map({per_sample("plus100", [](const Tensor& x, uint64_t) {
                                  return ops::scalar_tensor(x.item<int64_t>() + 100, DType::Int64);
                                })}))->shuffle(100, 1);
  auto got = firsts(s->batch(16));
  std::sort(got.begin(), got.end());
  std::vector<int64_t> want = iota(0, 50);
  for (int64_t i = 100; i < 150; ++i) want.push_back(i);
  EXPECT_EQ(got, want);
  auto bad = counting(3)->concat(from_tensors({ops::from_vector(std::vector<float>{1, 2})}));
  EXPECT_ERROR(collect(bad->batch(5)), "columns");
}

TEST(DataOps, SplitPartitionsReproducibly) {
  auto parts = counting(103)->split({0.8, 0.2}, 7);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0]->size() + parts[1]->size(), 103);
  EXPECT_EQ(parts[0]->size(), 83);  // floor(82.4) + the leftover row
  std::vector<int64_t> all = firsts(parts[0]);
  const auto second = firsts(parts[1]);
  all.insert(all.end(), second.begin(), second.end());
  EXPECT_NE(all, iota(0, 103));  // randomized
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, iota(0, 103));
  EXPECT_EQ(firsts(counting(103)->split({0.8, 0.2}, 7)[1]), second);
  EXPECT_EQ(firsts(counting(10)->split_sizes({6, 4}, 0, false)[1]), iota(6, 10));
  EXPECT_ERROR(counting(10)->split({0.5, 0.4}), "add up to 0.9");
  EXPECT_ERROR(counting(10)->split_sizes({6, 5}), "add up to 11");
  EXPECT_ERROR(counting(10)->batch(2)->split({0.5, 0.5}), "[split] needs a");
  // Parts are datasets like any other: shuffle one per epoch.
  EXPECT_EQ(parts[0]->shuffle(1000, 1)->size(), 83);
}

TEST(DataOps, ShardsPartitionTheData) {
  std::multiset<int64_t> seen;
  for (int64_t id = 0; id < 3; ++id) {
    auto sh = counting(10)->shuffle(10, 5)->shard(3, id);
    EXPECT_EQ(sh->size(), id == 0 ? 4 : 3);
    for (int64_t v : firsts(sh)) seen.insert(v);
  }
  EXPECT_EQ(std::vector<int64_t>(seen.begin(), seen.end()), iota(0, 10));
  EXPECT_EQ(firsts(counting(10)->shard(4, 1)), (std::vector<int64_t>{1, 5, 9}));
  auto gen = generator([](int64_t i) -> std::optional<Row> {
    if (i >= 10) return std::nullopt;
    return Row{ops::scalar_tensor(i, DType::Int64)};
  });
  EXPECT_EQ(firsts(gen->shard(4, 1)), (std::vector<int64_t>{1, 5, 9}));
  EXPECT_ERROR(counting(10)->shard(2, 2), "[shard] shard_id must be in [0, 2)");
}

TEST(DataOps, MapChecksItsColumn) {
  EXPECT_ERROR(collect(counting(4)->map({type_cast(DType::Float32)}, 5)), "[map] column 5 does not exist: rows have 2");
  const auto rows = collect(counting(4)->map({type_cast(DType::Float32, 2.0)}, -1));
  EXPECT_EQ(rows[3][1], (std::vector<double>{60}));
  EXPECT_ERROR(counting(4)->map({}, 0, 0), "num_parallel_workers must be in [1, 256]");
}

TEST(DataOps, RangeForAndSizes) {
  int64_t n = 0, sum = 0;
  for (const Row& row : counting(10)->batch(3)->iterate()) {
    ++n;
    for (int64_t v : row[0].to_vector<int64_t>()) sum += v;
  }
  EXPECT_EQ(n, 4);
  EXPECT_EQ(sum, 45);
}

}  // namespace
}  // namespace spore::data
