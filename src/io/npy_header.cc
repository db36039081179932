// SPDX-License-Identifier: Apache-2.0
#include "io/npy_header.h"

#include <cstring>
#include <string_view>

#include "spore/error.h"
#include "spore/shape.h"

namespace spore::io {
namespace {

// One Python literal grammar, no more: the dict, single- or double-quoted strings without
// escapes, True/False, tuples of non-negative decimal integers, whitespace and commas.
class DictParser {
 public:
  DictParser(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    skip_ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c, const char* where) {
    if (!eat(c)) fail(std::string("expected '") + c + "' " + where);
  }
  bool at(char c) {
    skip_ws();
    return i_ < s_.size() && s_[i_] == c;
  }
  bool at_end() {
    skip_ws();
    return i_ == s_.size();
  }

  std::string string_literal(const char* what_value) {
    skip_ws();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) fail(std::string("expected a quoted string for ") + what_value);
    const char q = s_[i_++];
    const size_t start = i_;
    while (i_ < s_.size() && s_[i_] != q) {
      const char c = s_[i_];
      if (c == '\\' || c < 0x20 || static_cast<unsigned char>(c) > 0x7e)
        fail(std::string("unexpected character in the string for ") + what_value);
      if (i_ - start >= 64) fail(std::string("the string for ") + what_value + " is too long");
      ++i_;
    }
    if (i_ >= s_.size()) fail(std::string("unterminated string for ") + what_value);
    return std::string(s_.substr(start, i_++ - start));
  }

  bool boolean(const char* what_value) {
    skip_ws();
    for (const auto& [word, value] : {std::pair{std::string_view("True"), true}, {std::string_view("False"), false}}) {
      if (s_.substr(i_, word.size()) == word) {
        i_ += word.size();
        return value;
      }
    }
    fail(std::string("'") + what_value + "' must be True or False");
    return false;
  }

  std::vector<int64_t> int_tuple() {
    expect('(', "to start 'shape' (a tuple such as (2, 3))");
    std::vector<int64_t> dims;
    while (!eat(')')) {
      if (!dims.empty()) {
        expect(',', "between the dimensions of 'shape'");
        if (eat(')')) break;  // (5,) and (2, 3,)
      }
      skip_ws();
      if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9') fail("'shape' must hold non-negative integers");
      int64_t d = 0;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
        // Checked before the multiply: the overflow itself would be undefined (found by fuzzing).
        const int digit = s_[i_++] - '0';
        if (d > ((int64_t{1} << 62) - digit) / 10) fail("a dimension in 'shape' is too large");
        d = d * 10 + digit;
      }
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 long suffix
      if (dims.size() == kNpyMaxDims) fail("'shape' has more than " + std::to_string(kNpyMaxDims) + " dimensions");
      dims.push_back(d);
    }
    return dims;
  }

  [[noreturn]] void fail(const std::string& problem) const {
    throw Error(what_ + ": bad header (" + problem + " at offset " + std::to_string(i_) +
                "): " + printable(s_.substr(0, 200)));
  }

 private:
  static std::string printable(std::string_view v) {
    std::string out;
    for (char c : v) out += (c >= 0x20 && c <= 0x7e) ? c : '?';
    return out;
  }
  std::string_view s_;
  size_t i_ = 0;
  const std::string& what_;
};

struct TypeCode {
  const char* code;
  DType dtype;
};
constexpr TypeCode kTypes[] = {{"b1", DType::Bool},    {"u1", DType::UInt8},   {"i1", DType::Int8},
                               {"i2", DType::Int16},   {"i4", DType::Int32},   {"i8", DType::Int64},
                               {"f2", DType::Float16}, {"f4", DType::Float32}, {"f8", DType::Float64}};

void parse_descr(const std::string& descr, NpyHeader& h, const std::string& what) {
  SPORE_CHECK(descr.size() >= 2 && std::strchr("<>=|", descr[0]) != nullptr, what, ": 'descr' must be a type string such as '<f4' (byte order, kind, size), got '", descr, "'");
  const std::string code = descr.substr(1);
  for (const auto& t : kTypes) {
    if (code != t.code) continue;
    h.dtype = t.dtype;
    const bool one_byte = dtype_size(t.dtype) == 1;
    SPORE_CHECK(one_byte || descr[0] != '|', what, ": 'descr' '", descr, "' has no byte order; multi-byte types need '<' or '>'");
    h.big_endian = !one_byte && descr[0] == '>';
    return;
  }
  SPORE_CHECK(false, what, ": dtype '", descr,
              "' is not supported; Spore reads bool, uint8, int8/16/32/64 and float16/32/64 arrays");
}

uint64_t read_le(std::span<const uint8_t> b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(b[at + i]) << (8 * i);
  return v;
}

}  // namespace

NpyHeader parse_npy_header(std::span<const uint8_t> head, uint64_t total_size, const std::string& what) {
  SPORE_CHECK(head.size() >= 8 && std::memcmp(head.data(), "\x93NUMPY", 6) == 0, what,
              ": not a .npy file (it must start with \\x93NUMPY)");
  const int major = head[6], minor = head[7];
  SPORE_CHECK(major >= 1 && major <= 3 && minor == 0, what, ": unsupported .npy format version ", major, ".", minor,
              "; versions 1.0, 2.0 and 3.0 are read");
  const size_t prefix = major == 1 ? 10 : 12;
  SPORE_CHECK(head.size() >= prefix, what, ": truncated header");
  const uint64_t header_len = read_le(head, 8, major == 1 ? 2 : 4);
  SPORE_CHECK(header_len > 0 && header_len <= kNpyMaxHeader && prefix + header_len <= total_size &&
                  prefix + header_len <= head.size(),
              what, ": header length ", header_len, " does not fit the ", total_size, "-byte file (at most ",
              kNpyMaxHeader, " bytes are read)");
  const std::string_view text(reinterpret_cast<const char*>(head.data() + prefix), header_len);

  NpyHeader h;
  h.data_offset = prefix + header_len;
  DictParser p(text, what);
  bool seen_descr = false, seen_fortran = false, seen_shape = false;
  p.expect('{', "to start the header dict");
  while (!p.eat('}')) {
    const std::string key = p.string_literal("a key");
    p.expect(':', "after a key");
    bool* seen = key == "descr" ? &seen_descr : key == "fortran_order" ? &seen_fortran : key == "shape" ? &seen_shape : nullptr;
    if (seen == nullptr) p.fail("unknown key '" + key + "'; a .npy header has 'descr', 'fortran_order' and 'shape'");
    if (*seen) p.fail("key '" + key + "' appears twice");
    *seen = true;
    if (key == "descr") {
      if (p.at('[')) SPORE_CHECK(false, what, ": structured dtypes (a list 'descr') are not supported; save plain arrays");
      parse_descr(p.string_literal("'descr'"), h, what);
    } else if (key == "fortran_order") {
      h.fortran_order = p.boolean("fortran_order");
    } else {
      h.shape = p.int_tuple();
    }
    if (p.eat('}')) break;
    p.expect(',', "between entries");
  }
  if (!p.at_end()) p.fail("unexpected text after the dict");
  SPORE_CHECK(seen_descr && seen_fortran && seen_shape, what, ": header has no '",
              !seen_descr ? "descr" : !seen_fortran ? "fortran_order" : "shape", "' entry");

  // Bound the shape by the file before multiplying: the product of the non-zero dimensions can
  // then not overflow, and no dimension can promise more data than exists.
  const uint64_t have = total_size - h.data_offset;
  uint64_t numel = 1, nonzero = 1;
  for (int64_t d : h.shape) {
    const auto u = static_cast<uint64_t>(d);
    if (u == 0) {
      numel = 0;
      continue;
    }
    SPORE_CHECK(nonzero <= total_size / u, what, ": shape ", shape_str(h.shape), " needs more data than the ",
                total_size, "-byte file holds");
    nonzero *= u;
    numel *= u;
  }
  h.data_bytes = numel * dtype_size(h.dtype);
  SPORE_CHECK(have == h.data_bytes, what, ": header says ", shape_str(h.shape), " ", dtype_name(h.dtype), " = ",
              h.data_bytes, " bytes of data, the file has ", have, have < h.data_bytes ? " (truncated)" : " (trailing bytes)");
  return h;
}

std::string format_npy_header(DType dtype, const std::vector<int64_t>& shape, const std::string& what) {
  const char* code = nullptr;
  for (const auto& t : kTypes)
    if (t.dtype == dtype) code = t.code;
  SPORE_CHECK(code != nullptr, what, ": ", dtype_name(dtype),
              " has no numpy dtype; convert first (e.g. t.to(DType::Float32), which is exact for bfloat16)");
  std::string dict = std::string("{'descr': '") + (dtype_size(dtype) == 1 ? "|" : "<") + code +
                     "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) dict += (i ? ", " : "") + std::to_string(shape[i]);
  dict += shape.size() == 1 ? ",), }" : "), }";
  // numpy pads with spaces and ends with '\n' so the data starts 64-byte aligned.
  const bool v1 = (10 + dict.size() + 1 + 63) / 64 * 64 - 10 <= 65535;
  const size_t prefix = v1 ? 10 : 12;
  const size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(v1 ? 1 : 2);
  out += '\0';
  const size_t len = dict.size();
  for (size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  return out + dict;
}

}  // namespace spore::io
