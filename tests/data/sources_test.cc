// SPDX-License-Identifier: Apache-2.0
// Sources other than IDX: from_tensors, csv, npy, generator.
#include <gtest/gtest.h>

#include "data/data_test_util.h"
#include "error_matchers.h"

namespace spore::data {
namespace {

using testing::collect;
using testing::TempDir;

std::string npy_bytes(const std::string& dict, const std::string& data, int version = 1) {
  std::string header = dict;
  const size_t pre = version == 1 ? 10 : 12;
  while ((pre + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(version) + '\0';
  const size_t n = header.size();
  out += static_cast<char>(n & 0xff);
  out += static_cast<char>((n >> 8) & 0xff);
  if (version != 1) out += std::string(2, '\0');
  return out + header + data;
}

template <class T>
std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

TEST(DataSources, FromTensorsChecksColumns) {
  auto ds = from_tensors({ops::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{3, 2}),
                          ops::from_vector(std::vector<int64_t>{7, 8, 9})});
  EXPECT_EQ(ds->size(), 3);
  const auto rows = collect(ds);
  EXPECT_EQ(rows[1][0], (std::vector<double>{3, 4}));
  EXPECT_EQ(rows[1][1], (std::vector<double>{8}));
  EXPECT_ERROR(from_tensors({ops::zeros(Shape{3}), ops::zeros(Shape{4})}), "column 0 has 3 rows, column 1 has 4");
  EXPECT_ERROR(from_tensors({ops::scalar_tensor(1.0, DType::Float32)}), "0-d");
  // Rows are copies: writing into a row leaves the source alone.
  Tensor col = ops::from_vector(std::vector<float>{1, 2});
  auto src = from_tensors({col});
  Tensor r = (*src->iterate().next())[0];
  r.data<float>()[0] = 99;
  EXPECT_EQ(col.to_vector<float>()[0], 1);
}

TEST(DataSources, Csv) {
  TempDir dir("csv");
  testing::write_bytes(dir.file("a.csv"), "x,label,w\n1.5, 3, 0\n-2e1,4,1\r\n\n0.25,5,true\n");
  auto ds = csv(dir.file("a.csv"), {DType::Float32, DType::Int64, DType::Bool});
  EXPECT_EQ(ds->size(), 3);
  const auto rows = collect(ds);
  EXPECT_EQ(rows[0][0], (std::vector<double>{1.5}));
  EXPECT_EQ(rows[1][0], (std::vector<double>{-20}));
  EXPECT_EQ(rows[2][1], (std::vector<double>{5}));
  EXPECT_EQ(rows[2][2], (std::vector<double>{1}));
  auto it = ds->iterate();
  const Row r = *it.next();
  EXPECT_EQ(r[0].dtype(), DType::Float32);
  EXPECT_EQ(r[1].dtype(), DType::Int64);
  EXPECT_EQ(r[0].dim(), 0);
  testing::write_bytes(dir.file("b.csv"), "1;2\n3;x\n");
  EXPECT_ERROR(csv(dir.file("b.csv"), {DType::Int64, DType::Int64}, {';', false}), "line 2 column 1: 'x' is not an integer");
  testing::write_bytes(dir.file("c.csv"), "h\n1,2\n3\n");
  EXPECT_ERROR(csv(dir.file("c.csv"), {DType::Float32, DType::Float32}), "line 3: 1 fields, expected 2");
  testing::write_bytes(dir.file("d.csv"), "h\n1,2,3\n");
  EXPECT_ERROR(csv(dir.file("d.csv"), {DType::Float32, DType::Float32}), "more than 2 fields");
  EXPECT_ERROR(csv(dir.file("none.csv"), {DType::Float32}), "cannot open");
}

TEST(DataSources, Npy) {
  TempDir dir("npy");
  testing::write_bytes(dir.file("x.npy"),
                       npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                                 raw(std::vector<float>{1, 2, 3, 4, 5, 6})));
  testing::write_bytes(dir.file("y.npy"), npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                                                    raw(std::vector<int64_t>{7, 8}), 2));
  const Tensor x = read_npy(dir.file("x.npy"));
  EXPECT_EQ(x.shape(), (Shape{2, 3}));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  auto ds = npy({dir.file("x.npy"), dir.file("y.npy")});
  const auto rows = collect(ds);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][0], (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(rows[1][1], (std::vector<double>{8}));
  // Fortran order: memory holds columns first.
  testing::write_bytes(dir.file("f.npy"), npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                                                    raw(std::vector<float>{1, 4, 2, 5, 3, 6})));
  EXPECT_EQ(read_npy(dir.file("f.npy")).to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // Broken files.
  testing::write_bytes(dir.file("t.npy"), npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                                                    raw(std::vector<float>{1, 2, 3})));
  EXPECT_ERROR(read_npy(dir.file("t.npy")), "header says (2, 3) float32 = 24 bytes of data, the file has 12 (truncated)");
  testing::write_bytes(dir.file("be.npy"), npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", "abcd"));
  EXPECT_ERROR(read_npy(dir.file("be.npy")), "big-endian");
  testing::write_bytes(dir.file("o.npy"), npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", "abcdefgh"));
  EXPECT_ERROR(read_npy(dir.file("o.npy")), "is not supported");
  testing::write_bytes(dir.file("m.npy"), "PK\x03\x04 not numpy");
  EXPECT_ERROR(read_npy(dir.file("m.npy")), "not a .npy file");
  testing::write_bytes(dir.file("h.npy"), std::string("\x93NUMPY\x01\x00\xff\x7f", 10));
  EXPECT_ERROR(read_npy(dir.file("h.npy")), "does not fit");
}

TEST(DataSources, Generator) {
  auto gen = generator(
      [](int64_t i) -> std::optional<Row> {
        return Row{ops::scalar_tensor(i * i, DType::Int64), ops::full(Shape{2}, Scalar(static_cast<double>(i)), {DType::Float32})};
      },
      5);
  EXPECT_EQ(gen->size(), 5);
  const auto rows = collect(gen->batch(2));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][0], (std::vector<double>{4, 9}));
  EXPECT_EQ(rows[1][1], (std::vector<double>{2, 2, 3, 3}));
  auto ragged = generator([](int64_t i) -> std::optional<Row> {
    if (i == 0) return Row{ops::zeros(Shape{1})};
    return Row{ops::zeros(Shape{1}), ops::zeros(Shape{1})};
  });
  EXPECT_ERROR(collect(ragged->take(3)), "[generator] row 1 has 2 columns, row 0 had 1");
  auto short_gen = generator([](int64_t i) -> std::optional<Row> {
    if (i >= 2) return std::nullopt;
    return Row{ops::zeros(Shape{1})};
  }, 4);
  EXPECT_ERROR(collect(short_gen), "its size was given as 4");
}

}  // namespace
}  // namespace spore::data
