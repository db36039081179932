// SPDX-License-Identifier: Apache-2.0
// copy_ (ops/inplace.cc) writes every destination element from the source, broadcast and cast,
// into any destination strides: dense ones (row-major, permuted, channels-last) through the
// elementwise loop, others element by element; a source overlapping the destination is read
// whole first. Checked against an index-by-index oracle.
#include <gtest/gtest.h>

#include <vector>

#include <spore/spore.h>

namespace spore {
namespace {

using namespace ops;

// dst[i] for every multi-index i, read through the tensor's own strides.
std::vector<double> by_index(const Tensor& t) {
  return t.contiguous().to(DType::Float64).to_vector<double>();
}

TEST(InplaceCopy, PermutedSourceIntoRowMajorAndPermutedDestinations) {
  manual_seed(1);
  const Tensor src = normal({2, 3, 4, 5});
  const Tensor perm = permute(src, {0, 2, 1, 3});  // (2, 4, 3, 5), strided
  Tensor row = zeros({2, 4, 3, 5});
  copy_(row, perm);
  EXPECT_EQ(by_index(row), by_index(perm));
  // A permuted dense destination (storage in another dim order).
  Tensor base = zeros({2, 3, 4, 5});
  Tensor dst = permute(base, {0, 2, 1, 3});
  copy_(dst, perm);
  EXPECT_EQ(by_index(dst), by_index(perm));
  EXPECT_EQ(by_index(base), by_index(src));
}

TEST(InplaceCopy, BroadcastAndCastSources) {
  Tensor dst = zeros({3, 4}, {.dtype = DType::Float64});
  copy_(dst, tensor({1.f, 2.f, 3.f, 4.f}));
  const auto v = dst.to_vector<double>();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(v[static_cast<size_t>(r * 4 + c)], c + 1.0);
  Tensor scalar_dst = zeros({});
  copy_(scalar_dst, scalar_tensor(7.0, DType::Float32));
  EXPECT_EQ(scalar_dst.item<float>(), 7.f);
}

TEST(InplaceCopy, OverlappingSourceIsReadBeforeItIsWritten) {
  Tensor sq = arange(0, 64 * 64).reshape({64, 64}).to(DType::Float32);  // more than one block of the loop
  const auto t = by_index(transpose(sq, 0, 1));
  copy_(sq, transpose(sq, 0, 1));  // an in-place transpose: every element read before the writes
  EXPECT_EQ(by_index(sq), t);
}

// Two halves of one storage (as a plan's arena holds every value) do not overlap: copied as
// they are, and the other half untouched.
TEST(InplaceCopy, DisjointPartsOfOneStorageCopyDirectly) {
  Tensor base = arange(0, 2 * 64 * 64).to(DType::Float32).reshape({2, 64, 64});
  Tensor lo = select(base, 0, 0), hi = select(base, 0, 1);
  const auto want = by_index(transpose(hi, 0, 1));
  copy_(lo, transpose(hi, 0, 1));
  EXPECT_EQ(by_index(lo), want);
  EXPECT_EQ(by_index(hi), by_index(arange(64 * 64, 2 * 64 * 64).to(DType::Float32).reshape({64, 64})));
}

TEST(InplaceCopy, NonDenseDestinationWritesOnlyItsElements) {
  Tensor base = zeros({4, 6});
  Tensor cols = slice(base, 1, 1, 5, 2);  // columns 1 and 3: not dense
  copy_(cols, ones({4, 2}) * 5.0);
  const auto v = base.to_vector<float>();
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 6; ++c) EXPECT_EQ(v[static_cast<size_t>(r * 6 + c)], (c == 1 || c == 3) ? 5.f : 0.f) << r << "," << c;
}

TEST(InplaceCopy, LargePermutedCopyMatchesTheOracle) {
  manual_seed(2);
  const Tensor heads = normal({16, 4, 128, 64});
  Tensor merged = zeros({16, 128, 4, 64});
  copy_(merged, permute(heads, {0, 2, 1, 3}));
  const auto h = heads.to_vector<float>(), m = merged.to_vector<float>();
  for (int64_t b = 0; b < 16; b += 5)
    for (int64_t s = 0; s < 128; s += 17)
      for (int64_t k = 0; k < 4; ++k)
        for (int64_t d = 0; d < 64; d += 9)
          ASSERT_EQ(m[static_cast<size_t>(((b * 128 + s) * 4 + k) * 64 + d)], h[static_cast<size_t>(((b * 4 + k) * 128 + s) * 64 + d)]);
}

}  // namespace
}  // namespace spore
