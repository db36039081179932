// SPDX-License-Identifier: Apache-2.0
// Shape and indexing ops: error messages and behaviour the PyTorch oracle cannot see (views vs
// copies, determinism, parallel paths). Numerics live in tests/oracle/cases_shape.cc.
#include <gtest/gtest.h>

#include "error_matchers.h"

#include <cmath>
#include <string>

#include <spore/spore.h>

namespace spore {
namespace {

using namespace ops;

/// Runs f, expecting spore::Error whose message contains `part`.

TEST(ShapeErrors, ConcatAndStack) {
  expect_error([] { concat({zeros({2, 3}), zeros({4, 5})}, 0); },
               "[concat] tensors must have the same shape except on axis 0: input 0 is (2, 3) and input 1 is (4, 5)");
  expect_error([] { concat({zeros({2, 3}), zeros({2, 3, 1})}, 1); }, "input 1 is (2, 3, 1)");
  expect_error([] { concat({}, 0); }, "[concat] needs at least one tensor");
  expect_error([] { concat({zeros({}), zeros({})}); }, "[concat] cannot concatenate 0-d tensors");
  expect_error([] { concat({zeros({2})}, 3); }, "concat");
  expect_error([] { stack({zeros({2, 3}), zeros({3, 2})}); },
               "[stack] all tensors must have the same shape: input 0 is (2, 3) and input 1 is (3, 2)");
}

TEST(ShapeErrors, SplitPadTri) {
  expect_error([] { split(zeros({5}), {2, 2}); }, "[split] sizes add up to 4 but axis 0 has size 5");
  expect_error([] { chunk(zeros({5}), 0); }, "[chunk] chunks must be positive, got 0");
  expect_error([] { pad(zeros({2, 3}), {3, 3}, PadMode::Reflect); },
               "[pad] reflect padding (3, 3) of axis 1 must be smaller than its size 3");
  expect_error([] { pad(zeros({2, 3}), {1, 1, 1}); }, "[pad] pads must come in (before, after) pairs, got 3 values");
  expect_error([] { pad(zeros({3}), {1, 1, 1, 1}); }, "[pad] 2 pairs of pads for a tensor of rank 1");
  expect_error([] { pad(zeros({3}), {-1, 0}, PadMode::Replicate); }, "only allowed in constant mode");
  expect_error([] { pad(zeros({0, 2}), {0, 0, 1, 1}, PadMode::Replicate); }, "needs a non-empty axis");
  expect_error([] { tril(zeros({3})); }, "[tril] needs a tensor of rank >= 2, got (3,)");
  expect_error([] { triu(zeros({})); }, "[triu] needs a tensor of rank >= 2");
  expect_error([] { flip(zeros({2, 3}), {1, -1}); }, "[flip] axis -1 appears twice");
  expect_error([] { roll(zeros({2, 3}), {1, 2}, {0}); }, "[roll] got 2 shifts for 1 axes");
  expect_error([] { tile(zeros({2}), {-1}); }, "[tile] repetitions must be non-negative, got -1");
}

TEST(ShapeErrors, IndexOutOfRange) {
  Tensor x = zeros({3, 5});
  expect_error([&] { gather(x, 1, tensor({{0, 7}, {1, 2}}).to(DType::Int64)); },
               "[gather] index 7 is out of range for axis 1 of size 5");
  expect_error([&] { gather(x, 0, tensor({{0, -1}}).to(DType::Int64)); },
               "[gather] index -1 is out of range for axis 0 of size 3");
  expect_error([&] { gather(x, 0, zeros({1, 2})); }, "[gather] index must be int64 or int32, got float32");
  expect_error([&] { gather(x, 0, zeros({4}, {DType::Int64})); }, "[gather] index has rank 1 but the input has rank 2");
  expect_error([&] { gather(x, 0, zeros({2, 6}, {DType::Int64})); }, "[gather] index of shape (2, 6) does not fit");
  expect_error([&] { scatter(x, 0, full({1, 2}, 3, {DType::Int64}), ones({1, 2})); },
               "[scatter] index 3 is out of range for axis 0 of size 3");
  expect_error([&] { scatter_add(x, 1, full({1, 2}, 5, {DType::Int32}), ones({1, 2})); },
               "[scatter_add] index 5 is out of range for axis 1 of size 5");
  expect_error([&] { index_select(x, 1, tensor({0, 9})); }, "[index_select] index 9 is out of range for axis 1 of size 5");
  expect_error([&] { take_along_axis(x, full({3, 1}, 8, {DType::Int64}), 1); }, "[take_along_axis] index 8 is out of range for axis 1 of size 5");
  expect_error([&] { one_hot(tensor({0, 5}), 3); },
               "[one_hot] class index 5 is out of range for num_classes 3; class indices must be in [0, 3)");
  expect_error([&] { one_hot(tensor({{0, 1}, {-1, 2}}), 3); }, "[one_hot] class index -1 is out of range");
  expect_error([&] { one_hot(zeros({0}, {DType::Int64})); }, "[one_hot] cannot infer num_classes from an empty index");
  expect_error([&] { topk(x, 6, 1); }, "[topk] k = 6 is out of range for axis 1 of size 5");
  expect_error([&] { topk(x, -1, 0); }, "[topk] k = -1 is out of range");
  expect_error([&] { masked_fill(x, ones({3, 5}), 1.0); }, "[masked_fill] mask must be bool, got float32");
  expect_error([&] { masked_fill(x, ones({2, 3, 5}, {DType::Bool}), 1.0); }, "does not broadcast to the input's shape (3, 5)");
  // A bad index inside a large, parallel gather reports the first bad position, no crash.
  Tensor big = zeros({1000, 200});
  Tensor idx = zeros({1000, 200}, {DType::Int64});
  Tensor bad = scatter(idx, 0, full({1, 200}, 999, {DType::Int64}), full({1, 200}, 4000, {DType::Int64}));
  expect_error([&] { gather(big, 0, bad); }, "[gather] index 4000 is out of range for axis 0 of size 1000");
}

TEST(Shape, SplitAndChunkAreViews) {
  Tensor x = arange(0, 12, 1).reshape({3, 4});
  auto parts = split(x, {1, 2}, 0);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].storage(), x.storage());
  EXPECT_EQ(parts[1].shape(), (Shape{2, 4}));
  auto ch = chunk(x, 3, 1);  // ceil(4 / 3) = 2: two pieces, like PyTorch
  ASSERT_EQ(ch.size(), 2u);
  EXPECT_EQ(ch[1].to_vector<int64_t>(), (std::vector<int64_t>{2, 3, 6, 7, 10, 11}));
  Tensor c = concat({x});
  EXPECT_NE(c.storage(), x.storage());  // concat always copies
  Tensor t = tile(x, {1, 1});
  EXPECT_NE(t.storage(), x.storage());
}

TEST(Shape, SortIsStableWithNaNLast) {
  Tensor x = from_vector(std::vector<float>{2, NAN, 1, 2, -INFINITY, 1, NAN});
  auto [v, i] = sort(x);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{4, 2, 5, 0, 3, 1, 6}));
  auto [vd, id] = sort(x, -1, true);
  EXPECT_EQ(id.to_vector<int64_t>(), (std::vector<int64_t>{1, 6, 0, 3, 2, 5, 4}));
  EXPECT_TRUE(std::isnan(vd.to_vector<float>()[0]));
  auto [tv, ti] = topk(x, 2, 0, false);
  EXPECT_EQ(ti.to_vector<int64_t>(), (std::vector<int64_t>{4, 2}));
}

TEST(Shape, ScatterDuplicatesAreDeterministic) {
  // Duplicate indices: scatter keeps the last write in index order, scatter_add sums.
  Tensor x = zeros({3});
  Tensor idx = tensor({1, 1, 1}).to(DType::Int64);
  Tensor src = tensor({1.f, 2.f, 3.f});
  EXPECT_EQ(scatter(x, 0, idx, src).to_vector<float>(), (std::vector<float>{0, 3, 0}));
  EXPECT_EQ(scatter_add(x, 0, idx, src).to_vector<float>(), (std::vector<float>{0, 6, 0}));
}

TEST(ShapeErrors, ScatterSrcDtypeMustMatch) {
  // PyTorch refuses the mismatch; a float src used to be truncated into the int input.
  Tensor x = zeros({3}, {DType::Int64});
  expect_error([&] { scatter(x, 0, tensor({0, 1}), tensor({1.5f, 2.5f})); },
               "[scatter] src has dtype float32 but the input has dtype int64; they must match: cast src to int64 first");
  expect_error([&] { scatter_add(zeros({3}), 0, tensor({0, 1}), ones({2}, {DType::Float64})); },
               "[scatter_add] src has dtype float64 but the input has dtype float32");
  expect_error([&] { scatter(x, 0, tensor({0, 1}), ones({2}, {DType::Int32})); }, "src has dtype int32");
  EXPECT_EQ(scatter(x, 0, tensor({2, 0}), tensor({7, 8})).to_vector<int64_t>(), (std::vector<int64_t>{8, 0, 7}));
}

TEST(ShapeErrors, FillValuesMustFitTheDtype) {
  // PyTorch: "value cannot be converted to type ... without overflow"; these used to wrap.
  Tensor i8 = arange(0, 3, 1, {DType::Int8}), m = tensor({true, false, true});
  expect_error([&] { masked_fill(arange(3), m, 1e30); },
               "[masked_fill] value 1e+30 cannot be converted to int64 without overflow");
  expect_error([&] { masked_fill(i8, m, 1000); }, "[masked_fill] value 1000 cannot be converted to int8");
  expect_error([&] { masked_fill(i8, m, NAN); }, "[masked_fill] value nan cannot be converted to int8");
  expect_error([&] { pad(i8, {1, 1}, PadMode::Constant, 1000); },
               "[pad] value 1000 cannot be converted to int8 without overflow");
  expect_error([&] { pad(i8, {1, 1}, PadMode::Constant, -129); }, "[pad] value -129 cannot be converted to int8");
  expect_error([&] { pad(i8, {1, 1}, PadMode::Constant, INFINITY); }, "[pad] value inf cannot be converted to int8");
  // What PyTorch accepts: in range (floats truncate), any value for bool and floating dtypes.
  EXPECT_EQ(masked_fill(i8, m, 2.5).to_vector<int64_t>(), (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(masked_fill(i8, m, -128).to_vector<int64_t>(), (std::vector<int64_t>{-128, 1, -128}));
  EXPECT_EQ(masked_fill(m, m, 5).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(masked_fill(zeros({2}), tensor({true, false}), 1e30).to_vector<float>(), (std::vector<float>{1e30f, 0}));
  EXPECT_EQ(pad(i8, {1, 1}, PadMode::Constant, 100).to_vector<int64_t>(), (std::vector<int64_t>{100, 0, 1, 2, 100}));
  EXPECT_EQ(pad(arange(0, 2, 1, {DType::UInt8}), {1, 0}, PadMode::Constant, -1).to_vector<int64_t>(),
            (std::vector<int64_t>{255, 0, 1}));
  EXPECT_EQ(pad(zeros({1}), {1, 0}, PadMode::Constant, 1e30).to_vector<float>(), (std::vector<float>{1e30f, 0}));
  EXPECT_EQ(pad(i8, {1, 1}, PadMode::Replicate).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 2, 2}));
}

TEST(Shape, IndexDtypesAndHelpers) {
  Tensor x = arange(0, 6, 1).reshape({2, 3});
  Tensor i32 = from_vector(std::vector<int32_t>{2, 0});
  EXPECT_EQ(i32.dtype(), DType::Int32);
  EXPECT_EQ(index_select(x, 1, i32).to_vector<int64_t>(), (std::vector<int64_t>{2, 0, 5, 3}));
  EXPECT_EQ(one_hot(tensor({0, 2}), -1).shape(), (Shape{2, 3}));
  Tensor nz = nonzero(tensor({{0, 1}, {2, 0}}));
  EXPECT_EQ(nz.shape(), (Shape{2, 2}));
  EXPECT_EQ(nz.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(nonzero(zeros({})).shape(), (Shape{0, 0}));
  EXPECT_EQ(masked_fill(x, tensor({true, false, true}), 9).to_vector<int64_t>(),
            (std::vector<int64_t>{9, 1, 9, 9, 4, 9}));
}

TEST(Shape, LargeCopiesMatchSmallPath) {
  // Large inputs take the threaded paths; compare against a per-row composition.
  Tensor x = arange(0, 300 * 500, 1).reshape({300, 500}).transpose(0, 1);
  Tensor f = flip(x, {0});
  EXPECT_EQ(select(f, 0, 0).to_vector<int64_t>(), select(x, 0, 499).to_vector<int64_t>());
  Tensor p = pad(x, {2, 2}, PadMode::Replicate);
  EXPECT_EQ(select(p, 1, 0).to_vector<int64_t>(), select(x, 1, 0).to_vector<int64_t>());
  Tensor r = roll(x, {1}, {1});
  EXPECT_EQ(select(r, 1, 0).to_vector<int64_t>(), select(x, 1, 299).to_vector<int64_t>());
  auto [v, i] = sort(neg(x), 0);
  EXPECT_EQ(select(i, 0, 0).to_vector<int64_t>(), std::vector<int64_t>(300, 499));
}

}  // namespace
}  // namespace spore
