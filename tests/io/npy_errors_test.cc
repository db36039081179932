// SPDX-License-Identifier: Apache-2.0
// Hostile and broken .npy/.npz files fail with a spore::Error naming the file and the fault;
// writes are atomic and refuse what numpy cannot hold.
#include <gtest/gtest.h>

#include <filesystem>

#include "error_matchers.h"
#include "io/npy_array.h"
#include "io/npz.h"
#include "npy_test_util.h"
#include "spore/io/npy.h"
#include "spore/ops/creation.h"

namespace spore::io {
namespace {

using testing::NpyTempDir;
using testing::read_file;
using testing::write_file;

/// A .npy file: version-1 prefix, the dict text as given (padded with a newline) and data.
std::string npy(const std::string& dict, const std::string& data, int version = 1) {
  const std::string h = dict + "\n";
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(version);
  out += '\0';
  const int len_bytes = version == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) out += static_cast<char>((h.size() >> (8 * i)) & 0xff);
  return out + h + data;
}

std::string load_error(const std::string& bytes) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  return error_of([&] { decode_npy({p, bytes.size()}, "[t] x.npy"); });
}

#define EXPECT_NPY_ERROR(bytes, text) \
  EXPECT_NE(load_error(bytes).find(text), std::string::npos) << "got: " << load_error(bytes)

TEST(NpyErrors, HostileHeaders) {
  const std::string f4x2 = std::string(8, '\0');
  EXPECT_NPY_ERROR("PK\x03\x04 zip", "[t] x.npy: not a .npy file");
  EXPECT_NPY_ERROR(std::string("\x93NUMPY\x04\x00\x10\x00", 10), "unsupported .npy format version 4.0");
  EXPECT_NPY_ERROR(std::string("\x93NUMPY\x01\x00\xff\x7f", 10) + "{}", "header length 32767 does not fit the 12-byte file");
  EXPECT_NPY_ERROR(std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12), "does not fit");
  EXPECT_NPY_ERROR(std::string("\x93NUMPY\x02\x00", 8), "truncated header");
  EXPECT_NPY_ERROR(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", f4x2), "unknown key 'x'");
  EXPECT_NPY_ERROR(npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", f4x2),
                   "key 'descr' appears twice");
  EXPECT_NPY_ERROR(npy("{'descr': '<f4', 'shape': (2,)}", f4x2), "header has no 'fortran_order' entry");
  EXPECT_NPY_ERROR(npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", f4x2),
                   "structured dtypes");
  EXPECT_NPY_ERROR(npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", f4x2),
                   "dtype '<c8' is not supported");
  EXPECT_NPY_ERROR(npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,)}", f4x2), "is not supported");
  EXPECT_NPY_ERROR(npy("{'descr': '<u2', 'fortran_order': False, 'shape': (4,)}", f4x2), "is not supported");
  EXPECT_NPY_ERROR(npy("{'descr': '|f4', 'fortran_order': False, 'shape': (2,)}", f4x2), "has no byte order");
  EXPECT_NPY_ERROR(npy("{'descr': '<f4', 'fortran_order': 1, 'shape': (2,)}", f4x2),
                   "'fortran_order' must be True or False");
  EXPECT_NPY_ERROR(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", f4x2), "non-negative integers");
  EXPECT_NPY_ERROR(npy("{'descr': '<f\\x34', 'fortran_order': False, 'shape': (2,)}", f4x2), "unexpected character");
  EXPECT_NPY_ERROR(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", f4x2),
                   "unexpected text after the dict");
  EXPECT_NPY_ERROR(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", f4x2), "expected ','");
  EXPECT_NPY_ERROR(npy("{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}", f4x2), "expected ':'");
  // Sizes: more than 32 dimensions, more than Spore's rank, dimensions whose product overflows.
  std::string dims33, dims17;
  for (int i = 0; i < 33; ++i) dims33 += "1, ";
  for (int i = 0; i < 17; ++i) dims17 += "1, ";
  EXPECT_NPY_ERROR(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims33 + ")}", "abcd"),
                   "more than 32 dimensions");
  EXPECT_NPY_ERROR(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims17 + ")}", "abcd"),
                   "the array has 17 dimensions; Spore tensors have at most 16");
  EXPECT_NPY_ERROR(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16)}", f4x2),
                   "needs more data than the");
  EXPECT_NPY_ERROR(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", f4x2),
                   "a dimension in 'shape' is too large");
  EXPECT_NPY_ERROR(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", f4x2),
                   "header says (2, 3) float32 = 24 bytes of data, the file has 8 (truncated)");
  EXPECT_NPY_ERROR(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", f4x2), "(trailing bytes)");
}

TEST(NpyErrors, LenientWhereNumpyIs) {
  // Double quotes, no trailing comma, (n) without a comma, a Python 2 long, any key order, version 3.
  const std::string data("\x01\x00\x02\x00", 4);
  for (const std::string dict : {"{\"shape\": (2), \"fortran_order\": False, \"descr\": \"<i2\"}",
                                  "{'descr':'<i2','fortran_order':False,'shape':(2L,),}"}) {
    for (int version : {1, 2, 3}) {
      const std::string bytes = npy(dict, data, version);
      const Tensor t = decode_npy({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "t");
      EXPECT_EQ(t.to_vector<int16_t>(), (std::vector<int16_t>{1, 2})) << dict;
    }
  }
  // A bool byte other than 0/1 is read as True (never an invalid C++ bool).
  const std::string b = npy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,)}", std::string("\x00\x07\x01", 3));
  const Tensor t = decode_npy({reinterpret_cast<const uint8_t*>(b.data()), b.size()}, "t");
  EXPECT_EQ(std::vector<uint8_t>(static_cast<uint8_t*>(t.data_ptr()), static_cast<uint8_t*>(t.data_ptr()) + 3),
            (std::vector<uint8_t>{0, 1, 1}));
}

TEST(NpyErrors, FilesAndArchives) {
  NpyTempDir dir("errors");
  EXPECT_ERROR(load_npy(dir.file("missing.npy")), "[load_npy] " + dir.file("missing.npy") + ": cannot open");
  EXPECT_ERROR(load_npy(dir.path().string()), "not a regular file");
  EXPECT_ERROR(load_npz(dir.file("missing.npz")), "no such file");
  write_file(dir.file("junk.npz"), "this is not a zip archive at all");
  EXPECT_ERROR(load_npz(dir.file("junk.npz")), "[load_npz] " + dir.file("junk.npz") + ": not a valid .npz (zip) archive");
  // numpy writes a text member: the archive holds something other than arrays.
  ASSERT_EQ(testing::run_numpy("write", dir.path().string()), 0);
  EXPECT_ERROR(load_npz(dir.file("text_member.npz")), "member 'notes.txt' is not a .npy array");
  // Flip one data byte of a stored member: the CRC catches it.
  std::string plain = read_file(dir.file("plain.npz"));
  const size_t at = plain.find("m_float64.npy");
  ASSERT_NE(at, std::string::npos);
  const size_t data_at = plain.find("\n", plain.find("{'descr'", at)) + 5;
  plain[data_at] = static_cast<char>(plain[data_at] ^ 0x40);
  write_file(dir.file("flipped.npz"), plain);
  EXPECT_ERROR(load_npz(dir.file("flipped.npz")), "member 'm_float64.npy': is corrupted: CRC error");
  // The same archive cut short.
  write_file(dir.file("short.npz"), read_file(dir.file("packed.npz")).substr(0, 300));
  EXPECT_ERROR(load_npz(dir.file("short.npz")), "not a valid .npz (zip) archive");
}

TEST(NpyErrors, WritesAreAtomicAndChecked) {
  NpyTempDir dir("writes");
  const Tensor a = ops::arange(6).reshape({2, 3});
  EXPECT_ERROR(save_npy(dir.file("nodir/a.npy"), a), "[save_npy] " + dir.file("nodir/a.npy") + ": cannot create");
  EXPECT_ERROR(save_npy(dir.file("bf.npy"), a.to(DType::BFloat16)), "bfloat16 has no numpy dtype");
  EXPECT_ERROR(save_npz(dir.file("bf.npz"), {{"w", a.to(DType::BFloat16)}}), "tensor 'w'");
  EXPECT_ERROR(save_npz(dir.file("dup.npz"), {{"w", a}, {"w", a}}), "two tensors are named 'w'");
  EXPECT_ERROR(save_npz(dir.file("empty.npz"), {{"", a}}), "empty name");
  EXPECT_ERROR(save_npz(dir.file("none.npz"), {}), "no tensors given");
  EXPECT_ERROR(save_npy(dir.file("u.npy"), Tensor()), "undefined");
  // A failed write leaves the previous file; a good one replaces it; no temporaries remain.
  save_npy(dir.file("a.npy"), a);
  EXPECT_ERROR(save_npy(dir.file("a.npy"), a.to(DType::BFloat16)), "bfloat16");
  EXPECT_EQ(load_npy(dir.file("a.npy")).to_vector<int64_t>(), a.to_vector<int64_t>());
  save_npy(dir.file("a.npy"), a.to(DType::Float32));
  EXPECT_EQ(load_npy(dir.file("a.npy")).dtype(), DType::Float32);
  save_npz(dir.file("a.npz"), {{"x", a}});
  save_npz(dir.file("a.npz"), {{"y", a}}, true);
  EXPECT_EQ(load_npz(dir.file("a.npz")).at(0).first, "y");
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
    ++files;
  }
  EXPECT_EQ(files, 2);
}

}  // namespace
}  // namespace spore::io
