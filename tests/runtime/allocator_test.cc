// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <spore/spore.h>

namespace spore {
namespace {
using namespace ops;

TEST(Allocator, ReusesFreedBlocksAndCountsBytes) {
  empty_cache();
  const MemoryStats s0 = memory_stats();
  { Tensor a = zeros({1000}); }  // 4000 bytes -> a 4096-byte class
  const MemoryStats s1 = memory_stats();
  EXPECT_EQ(s1.bytes_in_use, s0.bytes_in_use);
  EXPECT_EQ(s1.bytes_cached, s0.bytes_cached + 4096);
  EXPECT_EQ(s1.system_allocations, s0.system_allocations + 1);
  { Tensor b = zeros({1000}); }  // same class: served from the cache
  EXPECT_EQ(memory_stats().system_allocations, s1.system_allocations);
  empty_cache();
  EXPECT_EQ(memory_stats().bytes_cached, 0u);
}

// From 64 MiB up blocks are whole 2 MiB pages (a plan's arena wastes under 2 MiB, not up to a
// quarter), and a request may take a cached block up to 1/8 larger; freeing such a block
// returns its own size to the cache.
TEST(Allocator, LargeBlocksArePagesAndReuseSlightlyLargerCachedOnes) {
  empty_cache();
  const MemoryStats s0 = memory_stats();
  constexpr int64_t kMiB = int64_t{1} << 20;
  { Tensor a = empty({100 * kMiB + 1}, {DType::Int8}); }  // 100 MiB + 1 byte -> a 102 MiB block
  const MemoryStats s1 = memory_stats();
  EXPECT_EQ(s1.bytes_cached, s0.bytes_cached + static_cast<size_t>(102 * kMiB));
  EXPECT_EQ(s1.system_allocations, s0.system_allocations + 1);
  {
    Tensor b = empty({95 * kMiB}, {DType::Int8});  // a 96 MiB class; the cached 102 MiB block serves it
    EXPECT_EQ(memory_stats().system_allocations, s1.system_allocations);
    EXPECT_EQ(memory_stats().bytes_in_use, s0.bytes_in_use + static_cast<size_t>(102 * kMiB));
  }
  EXPECT_EQ(memory_stats().bytes_in_use, s0.bytes_in_use);
  EXPECT_EQ(memory_stats().bytes_cached, s1.bytes_cached);
  { Tensor c = empty({80 * kMiB}, {DType::Int8}); }  // more than 1/8 smaller: a block of its own
  EXPECT_EQ(memory_stats().system_allocations, s1.system_allocations + 1);
  empty_cache();
  EXPECT_EQ(memory_stats().bytes_cached, 0u);
}

TEST(Allocator, SixtyFourByteAlignment) {
  for (int n : {1, 3, 17, 1000, 300000}) {
    Tensor t = empty({n}, {DType::Int8});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u) << n;
  }
}

TEST(Allocator, PeakTracksHighWater) {
  reset_peak_memory_stats();
  const size_t base = memory_stats().bytes_in_use;
  {
    Tensor a = zeros({1 << 20});  // 4 MiB
    EXPECT_GE(memory_stats().peak_bytes_in_use, base + (4u << 20));
  }
  EXPECT_GE(memory_stats().peak_bytes_in_use, base + (4u << 20));
  reset_peak_memory_stats();
  EXPECT_EQ(memory_stats().peak_bytes_in_use, memory_stats().bytes_in_use);
}

TEST(Allocator, CapGivesClearOutOfMemoryError) {
  empty_cache();
  const size_t in_use = memory_stats().bytes_in_use;
  set_memory_limit(in_use + (1u << 20));
  try {
    Tensor big = zeros({1 << 22});  // 16 MiB over a 1 MiB margin
    set_memory_limit(0);
    FAIL() << "expected an out-of-memory error";
  } catch (const OutOfMemoryError& e) {
    set_memory_limit(0);
    std::string msg = e.what();
    EXPECT_NE(msg.find("[memory] out of memory: a request of 16.00 MiB"), std::string::npos) << msg;
    EXPECT_NE(msg.find("over the cap of"), std::string::npos) << msg;
    EXPECT_NE(msg.find("SPORE_MEMORY_LIMIT"), std::string::npos) << msg;
  }
  Tensor ok = zeros({1 << 22});  // the cap is gone
  EXPECT_EQ(ok.numel(), 1 << 22);
}

TEST(Allocator, CapReleasesCacheBeforeFailing) {
  empty_cache();
  { Tensor a = zeros({1 << 20}); }  // leaves 4 MiB cached in one class
  const MemoryStats s = memory_stats();
  set_memory_limit(s.bytes_in_use + (6u << 20));
  Tensor b = zeros({(1 << 20) + 4096});  // another class: needs the cached block released
  set_memory_limit(0);
  EXPECT_GT(memory_stats().system_frees, s.system_frees);
}

// A steady loop of ops with a training step's traffic (matmul, conv, norms, softmax,
// reductions, elementwise, views, casts, random) makes no system allocation after warm-up:
// every output and scratch block comes back from the cache.
TEST(Allocator, SteadyLoopMakesNoSystemAllocations) {
  Tensor w = full({64, 128}, 0.01);
  Tensor k = full({8, 3, 3, 3}, 0.1);
  Tensor x = linspace(-1, 1, 32 * 64).reshape({32, 64});
  Tensor img = linspace(-1, 1, 4 * 3 * 16 * 16).reshape({4, 3, 16, 16});
  ConvOptions co;
  co.padding = {1};
  auto step = [&] {
    Tensor h = layer_norm(gelu(matmul(x, w)), {128});
    Tensor p = softmax(h, -1);
    Tensor loss = mean(sum(p * h, {1}));
    Tensor c = relu(conv2d(img, k, {}, co));
    Tensor g = (h * h - 1.0) * 0.5 + dropout(h, 0.1);
    w = w - matmul(x.transpose(0, 1), g) * 0.001;
    return loss + mean(c) + sum(exp(g).to(DType::Float64)).to(DType::Float32);
  };
  for (int i = 0; i < 3; ++i) step();  // warm-up
  const uint64_t before = memory_stats().system_allocations;
  for (int i = 0; i < 30; ++i) step();
  EXPECT_EQ(memory_stats().system_allocations, before);
}

TEST(Allocator, MetaTensorsHaveNoStorage) {
  const MemoryStats s = memory_stats();
  Tensor m = empty({1 << 20, 1 << 10}, {DType::Float32, kMeta});  // 4 GiB of types only
  Tensor y = m + m;
  EXPECT_EQ(y.shape(), (Shape{1 << 20, 1 << 10}));
  EXPECT_EQ(y.device(), kMeta);
  EXPECT_EQ(memory_stats().bytes_in_use, s.bytes_in_use);
  EXPECT_THROW((void)m.item<float>(), Error);
}

}  // namespace
}  // namespace spore
