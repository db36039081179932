// SPDX-License-Identifier: Apache-2.0
// Oracle cases for factories: values come from attributes only.
#include "oracle.h"

namespace spore::oracle {

SPORE_ORACLE_FAMILY(creation) {
  using namespace ops;
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32, DType::Int64, DType::UInt8, DType::Bool}) {
    std::string n(dtype_name(dt));
    w.add("zeros", {}, {zeros({2, 3}, {dt})}, {{"shape", std::vector<int64_t>{2, 3}}, {"dtype", n}});
    w.add("ones", {}, {ones({4}, {dt})}, {{"shape", std::vector<int64_t>{4}}, {"dtype", n}});
    w.add("full", {}, {full({3, 1}, 7, {dt})}, {{"shape", std::vector<int64_t>{3, 1}}, {"value", int64_t{7}}, {"dtype", n}});
    w.add("eye", {}, {eye(3, 4, {dt})}, {{"n", int64_t{3}}, {"m", int64_t{4}}, {"dtype", n}});
  }
  w.add("full", {}, {full({2}, 2.5)}, {{"shape", std::vector<int64_t>{2}}, {"value", 2.5}, {"dtype", std::string("float32")}});
  w.add("full", {}, {full({}, -1.25, {DType::Float64})}, {{"shape", std::vector<int64_t>{}}, {"value", -1.25}, {"dtype", std::string("float64")}});
  w.add("zeros", {}, {zeros({0, 5})}, {{"shape", std::vector<int64_t>{0, 5}}, {"dtype", std::string("float32")}});
  // arange: integer and float forms, negative steps, empty ranges.
  w.add("arange_int", {}, {arange(10)}, {{"start", int64_t{0}}, {"end", int64_t{10}}, {"step", int64_t{1}}});
  w.add("arange_int", {}, {arange(3, -8, -3)}, {{"start", int64_t{3}}, {"end", int64_t{-8}}, {"step", int64_t{-3}}});
  w.add("arange_int", {}, {arange(5, 5, 1)}, {{"start", int64_t{5}}, {"end", int64_t{5}}, {"step", int64_t{1}}});
  w.add("arange_float", {}, {arange(0.5, 3.0, 0.25)}, {{"start", 0.5}, {"end", 3.0}, {"step", 0.25}, {"dtype", std::string("float32")}});
  w.add("arange_float", {}, {arange(1.0, -1.0, -0.3, {DType::Float64})}, {{"start", 1.0}, {"end", -1.0}, {"step", -0.3}, {"dtype", std::string("float64")}});
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    std::string n(dtype_name(dt));
    w.add("linspace", {}, {linspace(-2, 3, 11, {dt})}, {{"start", -2.0}, {"end", 3.0}, {"steps", int64_t{11}}, {"dtype", n}});
    w.add("linspace", {}, {linspace(0, 1, 1, {dt})}, {{"start", 0.0}, {"end", 1.0}, {"steps", int64_t{1}}, {"dtype", n}});
    w.add("linspace", {}, {linspace(1, 0, 0, {dt})}, {{"start", 1.0}, {"end", 0.0}, {"steps", int64_t{0}}, {"dtype", n}});
    w.add("linspace", {}, {linspace(0.1, 1000.7, 1000, {dt})}, {{"start", 0.1}, {"end", 1000.7}, {"steps", int64_t{1000}}, {"dtype", n}});
  }
  w.add("linspace", {}, {linspace(0, 10, 6, {DType::Int64})}, {{"start", 0.0}, {"end", 10.0}, {"steps", int64_t{6}}, {"dtype", std::string("int64")}});
}

}  // namespace spore::oracle
