// SPDX-License-Identifier: Apache-2.0
// CSV files of numbers, parsed once into one tensor per column.
#include <charconv>
#include <fstream>

#include "data/nodes.h"
#include "spore/data/sources.h"
#include "spore/ops/creation.h"

namespace spore::data {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::shared_ptr<Dataset> csv(const std::string& path, std::vector<DType> column_types, CsvOptions options) {
  SPORE_CHECK(!column_types.empty(), "[csv] ", path, ": no column types given");
  std::ifstream f(path);
  SPORE_CHECK(f.good(), "[csv] ", path, ": cannot open (no such file or not readable)");
  const size_t ncols = column_types.size();
  std::vector<std::vector<double>> fvals(ncols);
  std::vector<std::vector<int64_t>> ivals(ncols);
  std::string line;
  int64_t line_no = 0;
  while (std::getline(f, line)) {
    ++line_no;
    if (line_no == 1 && options.header) continue;
    if (trim(line).empty()) continue;
    std::string_view rest = line;
    for (size_t c = 0; c < ncols; ++c) {
      const size_t cut = rest.find(options.delimiter);
      SPORE_CHECK(cut != std::string_view::npos || c == ncols - 1, "[csv] ", path, " line ", line_no, ": ", c + 1,
                  " fields, expected ", ncols, " (one per column type)");
      const std::string_view field = trim(rest.substr(0, cut));
      rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
      if (c == ncols - 1)
        SPORE_CHECK(cut == std::string_view::npos, "[csv] ", path, " line ", line_no, ": more than ", ncols,
                    " fields, expected ", ncols, " (one per column type)");
      const DType t = column_types[c];
      const char* b = field.data();
      const char* e = field.data() + field.size();
      if (is_floating(t)) {
        double v = 0;
        auto r = std::from_chars(b, e, v);
        SPORE_CHECK(!field.empty() && r.ec == std::errc() && r.ptr == e, "[csv] ", path, " line ", line_no, " column ",
                    c, ": '", field, "' is not a number (column type ", dtype_name(t), ")");
        fvals[c].push_back(v);
      } else {
        int64_t v = 0;
        if (t == DType::Bool && (field == "true" || field == "false")) {
          v = field == "true";
        } else {
          auto r = std::from_chars(b, e, v);
          SPORE_CHECK(!field.empty() && r.ec == std::errc() && r.ptr == e, "[csv] ", path, " line ", line_no, " column ",
                      c, ": '", field, "' is not an integer (column type ", dtype_name(t), ")");
        }
        ivals[c].push_back(v);
      }
    }
  }
  std::vector<Tensor> cols;
  for (size_t c = 0; c < ncols; ++c) {
    const DType t = column_types[c];
    cols.push_back(is_floating(t) ? ops::from_vector(fvals[c]).to(t) : ops::from_vector(ivals[c]).to(t));
  }
  SPORE_CHECK(cols[0].size(0) > 0, "[csv] ", path, ": no data rows");
  return make_tensor_source(std::move(cols), "csv");
}

}  // namespace spore::data
