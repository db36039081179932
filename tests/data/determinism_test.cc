// SPDX-License-Identifier: Apache-2.0
// The output of a pipeline is a function of its seeds and the epoch alone: worker counts and
// prefetching change nothing; seeds and epochs change the order, reproducibly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "data/data_test_util.h"

namespace spore::data {
namespace {

using testing::collect;
using testing::firsts;

std::shared_ptr<Dataset> fashion_pipeline(const std::shared_ptr<Dataset>& src, int workers, bool prefetch, uint64_t seed) {
  auto ds = src->map({to_tensor(), random_crop(28, 28, 2, 0, seed), random_horizontal_flip(0.5, seed),
                      normalize({0.2860}, {0.3530})},
                     0, workers)
                ->shuffle(src->size(), seed)
                ->batch(128, true);
  return prefetch ? ds->prefetch(3) : ds;
}

/// Raw bytes of every tensor of every row of one epoch.
std::vector<std::string> epoch_bytes(const std::shared_ptr<Dataset>& ds, uint64_t epoch) {
  std::vector<std::string> out;
  auto it = ds->iterate(epoch);
  while (auto row = it.next()) {
    std::string s;
    for (const Tensor& t : *row) {
      const Tensor c = t.contiguous();
      s.append(static_cast<const char*>(c.data_ptr()), static_cast<size_t>(c.numel()) * c.itemsize());
    }
    out.push_back(std::move(s));
  }
  return out;
}

TEST(DataDeterminism, WorkersAndPrefetchGiveIdenticalBatches) {
  auto src = mnist(testing::kFashionDir, "test")->take(3000);
  const auto ref = epoch_bytes(fashion_pipeline(src, 1, false, 5), 1);
  ASSERT_EQ(ref.size(), 3000u / 128);
  for (int workers : {2, 4}) {
    for (bool pf : {false, true}) EXPECT_EQ(epoch_bytes(fashion_pipeline(src, workers, pf, 5), 1), ref) << workers << pf;
  }
  EXPECT_EQ(epoch_bytes(fashion_pipeline(src, 1, true, 5), 1), ref);
}

TEST(DataDeterminism, BatchShapesAndDtypes) {
  auto src = mnist(testing::kFashionDir, "test");
  auto it = fashion_pipeline(src, 2, true, 1)->iterate();
  auto row = it.next();
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ((*row)[0].shape(), (Shape{128, 1, 28, 28}));
  EXPECT_EQ((*row)[0].dtype(), DType::Float32);
  EXPECT_EQ((*row)[1].shape(), (Shape{128}));
  EXPECT_EQ((*row)[1].dtype(), DType::Int64);
}

TEST(DataDeterminism, SeedsAndEpochsChangeTheOrderReproducibly) {
  auto src = testing::counting(1000);
  const auto e0 = firsts(src->shuffle(1000, 1), 0);
  EXPECT_EQ(firsts(src->shuffle(1000, 1), 0), e0);
  EXPECT_NE(firsts(src->shuffle(1000, 2), 0), e0);
  const auto e1 = firsts(src->shuffle(1000, 1), 1);
  EXPECT_NE(e1, e0);
  EXPECT_EQ(firsts(src->shuffle(1000, 1), 1), e1);
  // A permutation: every row once.
  auto sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, firsts(src));
  EXPECT_NE(e0, firsts(src));
}

TEST(DataDeterminism, SmallBufferShufflesLocally) {
  auto src = testing::counting(1000);
  const auto order = firsts(src->shuffle(10, 3));
  auto sorted = order;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, firsts(src));
  EXPECT_NE(order, firsts(src));
  // A buffer of 10 rows: output i comes from the first i + 10 input rows.
  for (size_t i = 0; i < order.size(); ++i) EXPECT_LT(order[i], static_cast<int64_t>(i) + 10);
}

TEST(DataDeterminism, StreamedShuffleMatchesRandomAccessShuffle) {
  // The buffer algorithm draws the same slots over rows (a generator) as over row indices.
  auto gen = generator([](int64_t i) -> std::optional<Row> {
    if (i >= 500) return std::nullopt;
    return Row{ops::scalar_tensor(i, DType::Int64)};
  });
  EXPECT_EQ(gen->size(), -1);
  for (int64_t buffer : {7, 500}) {
    EXPECT_EQ(firsts(gen->shuffle(buffer, 9), 2), firsts(testing::counting(500)->shuffle(buffer, 9), 2)) << buffer;
  }
}

TEST(DataDeterminism, ParallelMapOverAStreamIsOrdered) {
  auto gen = generator([](int64_t i) -> std::optional<Row> {
    if (i >= 300) return std::nullopt;
    return Row{ops::full(Shape{4, 4}, Scalar(static_cast<double>(i)), {DType::Float32})};
  });
  auto flip = random_horizontal_flip(0.5, 3);
  auto add_id = per_sample("plus_key_bit", [](const Tensor& x, uint64_t key) {
    Tensor out = x.clone();
    out.data<float>()[0] += static_cast<float>(key & 7);
    return out;
  });
  const auto ref = collect(gen->map({flip, add_id}, 0, 1)->batch(32));
  ASSERT_EQ(ref.size(), 10u);
  for (int w : {2, 3, 4}) EXPECT_EQ(collect(gen->map({flip, add_id}, 0, w)->batch(32)->prefetch(2)), ref) << w;
}

TEST(DataDeterminism, RepeatDrawsEachPassAnew) {
  auto ds = testing::counting(50)->shuffle(50, 4)->repeat(3);
  EXPECT_EQ(ds->size(), 150);
  const auto all = firsts(ds, 0);
  ASSERT_EQ(all.size(), 150u);
  const std::vector<int64_t> p0(all.begin(), all.begin() + 50), p1(all.begin() + 50, all.begin() + 100);
  EXPECT_NE(p0, p1);
  EXPECT_EQ(firsts(ds, 0), all);
  EXPECT_NE(firsts(ds, 1), all);
}

TEST(DataDeterminism, WorkerErrorsSurfaceInTheConsumer) {
  auto bad = per_sample("explode", [](const Tensor& x, uint64_t) -> Tensor {
    if (x.item<int64_t>() == 77) throw Error("[explode] sample 77");
    return x;
  });
  for (int w : {1, 3}) {
    auto ds = testing::counting(200)->map({bad}, 0, w)->prefetch(2);
    auto it = ds->iterate();
    try {
      while (it.next()) {
      }
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("sample 77"), std::string::npos);
    }
  }
}

TEST(DataDeterminism, StatsReportPerNodeWork) {
  auto ds = mnist(testing::kFashionDir, "test")
                ->map({to_tensor(), normalize({0.5}, {0.5})}, 0, 2)
                ->shuffle(10000, 1)
                ->batch(100)
                ->prefetch(2);
  int64_t batches = 0;
  for (const Row& row : ds->iterate()) {
    EXPECT_EQ(row[0].size(0), 100);
    ++batches;
  }
  EXPECT_EQ(batches, 100);
  const std::string s = ds->stats();
  EXPECT_NE(s.find("prefetch(2)"), std::string::npos) << s;
  EXPECT_NE(s.find("queue depth"), std::string::npos) << s;
  EXPECT_NE(s.find("to_tensor"), std::string::npos) << s;
  EXPECT_NE(s.find("10000 rows"), std::string::npos) << s;  // map and the source each produced every row once
  EXPECT_NE(s.find("100 rows"), std::string::npos) << s;    // batch
  ds->reset_stats();
  EXPECT_EQ(ds->stats().find("10000 rows"), std::string::npos);
}

}  // namespace
}  // namespace spore::data
