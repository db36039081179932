// SPDX-License-Identifier: Apache-2.0
// NumPy .npy files: magic, version, a header dict ('descr', 'fortran_order', 'shape') and raw
// data whose size must match the header exactly.
#include <cstring>
#include <filesystem>
#include <fstream>

#include "data/nodes.h"
#include "spore/data/sources.h"

namespace spore::data {
namespace {

/// The text of `key`'s value in the header dict, up to the next top-level ',' or '}'.
std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  const std::string quoted[2] = {"'" + key + "'", "\"" + key + "\""};
  size_t at = std::string::npos;
  for (const auto& q : quoted)
    if ((at = header.find(q)) != std::string::npos) {
      at += q.size();
      break;
    }
  SPORE_CHECK(at != std::string::npos, "[read_npy] ", path, ": header has no '", key, "' entry: ", header);
  at = header.find(':', at);
  SPORE_CHECK(at != std::string::npos, "[read_npy] ", path, ": header entry '", key, "' has no value: ", header);
  ++at;
  int depth = 0;
  size_t end = at;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    if (depth < 0) break;
  }
  std::string v = header.substr(at, end - at);
  const auto b = v.find_first_not_of(" \t");
  const auto e = v.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : v.substr(b, e - b + 1);
}

DType npy_dtype(std::string descr, const std::string& path) {
  SPORE_CHECK(descr.size() >= 3 && (descr.front() == '\'' || descr.front() == '"'), "[read_npy] ", path,
              ": 'descr' must be a type string such as '<f4', got ", descr);
  descr = descr.substr(1, descr.size() - 2);
  SPORE_CHECK(descr[0] != '>', "[read_npy] ", path, ": big-endian data ('", descr,
              "') is not supported; save it little-endian (arr.astype('<", descr.substr(1), "'))");
  const std::string t = descr.substr(1);
  if (t == "b1") return DType::Bool;
  if (t == "u1") return DType::UInt8;
  if (t == "i1") return DType::Int8;
  if (t == "i2") return DType::Int16;
  if (t == "i4") return DType::Int32;
  if (t == "i8") return DType::Int64;
  if (t == "f2") return DType::Float16;
  if (t == "f4") return DType::Float32;
  if (t == "f8") return DType::Float64;
  SPORE_CHECK(false, "[read_npy] ", path, ": dtype '", descr,
              "' is not supported; use bool, uint8, int8/16/32/64 or float16/32/64");
  return DType::Float32;
}

Shape npy_shape(const std::string& v, const std::string& path) {
  SPORE_CHECK(v.size() >= 2 && v.front() == '(' && v.back() == ')', "[read_npy] ", path,
              ": 'shape' must be a tuple, got ", v);
  Shape shape;
  size_t i = 1;
  while (i < v.size() - 1) {
    while (i < v.size() - 1 && (v[i] == ' ' || v[i] == ',')) ++i;
    if (i >= v.size() - 1) break;
    size_t j = i;
    int64_t d = 0;
    while (j < v.size() - 1 && v[j] >= '0' && v[j] <= '9') {
      d = d * 10 + (v[j] - '0');
      SPORE_CHECK(d <= (int64_t{1} << 40), "[read_npy] ", path, ": dimension too large in shape ", v);
      ++j;
    }
    if (j < v.size() - 1 && v[j] == 'L') ++j;  // Python 2 long suffix
    SPORE_CHECK(j > i, "[read_npy] ", path, ": bad shape ", v);
    shape.push_back(d);
    SPORE_CHECK(shape.size() <= static_cast<size_t>(kMaxRank), "[read_npy] ", path, ": more than ", kMaxRank, " dimensions");
    i = j;
  }
  return shape;
}

}  // namespace

Tensor read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  SPORE_CHECK(f.good(), "[read_npy] ", path, ": cannot open (no such file or not readable)");
  std::error_code ec;
  const int64_t file_size = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  char pre[10];
  f.read(pre, 10);
  SPORE_CHECK(f.gcount() == 10 && std::memcmp(pre, "\x93NUMPY", 6) == 0, "[read_npy] ", path,
              ": not a .npy file (it must start with \\x93NUMPY)");
  const int major = static_cast<unsigned char>(pre[6]);
  SPORE_CHECK(major >= 1 && major <= 3, "[read_npy] ", path, ": unsupported .npy version ", major, "; versions 1-3 are read");
  int64_t header_len = 0;
  int64_t prefix = 10;
  if (major == 1) {
    header_len = static_cast<unsigned char>(pre[8]) | (static_cast<unsigned char>(pre[9]) << 8);
  } else {
    char more[2];
    f.read(more, 2);
    SPORE_CHECK(f.gcount() == 2, "[read_npy] ", path, ": truncated header");
    header_len = static_cast<int64_t>(static_cast<unsigned char>(pre[8])) | (static_cast<unsigned char>(pre[9]) << 8) |
                 (static_cast<int64_t>(static_cast<unsigned char>(more[0])) << 16) |
                 (static_cast<int64_t>(static_cast<unsigned char>(more[1])) << 24);
    prefix = 12;
  }
  SPORE_CHECK(header_len > 0 && prefix + header_len <= file_size && header_len < (1 << 20), "[read_npy] ", path,
              ": header length ", header_len, " does not fit the ", file_size, "-byte file");
  std::string header(static_cast<size_t>(header_len), '\0');
  f.read(header.data(), header_len);
  SPORE_CHECK(f.gcount() == header_len, "[read_npy] ", path, ": truncated header");
  const DType dtype = npy_dtype(dict_value(header, "descr", path), path);
  const std::string fortran = dict_value(header, "fortran_order", path);
  SPORE_CHECK(fortran == "False" || fortran == "True", "[read_npy] ", path, ": 'fortran_order' must be True or False, got ",
              fortran);
  Shape shape = npy_shape(dict_value(header, "shape", path), path);
  int64_t numel = 1;
  for (Dim d : shape) {
    SPORE_CHECK(d == 0 || numel <= (int64_t{1} << 40) / d, "[read_npy] ", path, ": shape ", shape_str(shape),
                " is too large");
    numel *= d;
  }
  const int64_t bytes = numel * static_cast<int64_t>(dtype_size(dtype));
  const int64_t have = file_size - prefix - header_len;
  SPORE_CHECK(have == bytes, "[read_npy] ", path, ": header says ", shape_str(shape), " ", dtype_name(dtype), " = ", bytes,
              " bytes of data, the file has ", have, have < bytes ? " (truncated)" : " (trailing bytes)");
  const bool fortran_order = fortran == "True";
  Shape stored = shape;
  if (fortran_order) std::reverse(stored.begin(), stored.end());
  Tensor out = Tensor::empty(stored, dtype);
  f.read(static_cast<char*>(out.data_ptr()), bytes);
  SPORE_CHECK(f.gcount() == bytes, "[read_npy] ", path, ": read failed after ", f.gcount(), " of ", bytes, " bytes");
  if (fortran_order && shape.size() > 1) {
    std::vector<int64_t> axes(shape.size());
    for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(axes.size() - 1 - i);
    out = out.permute(axes).contiguous();
  }
  return out;
}

std::shared_ptr<Dataset> npy(const std::vector<std::string>& paths) {
  SPORE_CHECK(!paths.empty(), "[npy] no files given");
  std::vector<Tensor> cols;
  for (const auto& p : paths) {
    cols.push_back(read_npy(p));
    SPORE_CHECK(cols.back().dim() >= 1, "[npy] ", p, " holds a 0-d array; each file needs a sample axis first");
  }
  return make_tensor_source(std::move(cols), "npy");
}

}  // namespace spore::data
