// SPDX-License-Identifier: Apache-2.0
#pragma once
// The PyTorch oracle, C++ side. Each family file (cases_<family>.cc) registers a function that
// adds cases: an op name (a key of the Python table in torch_ops/<family>.py), attributes as
// JSON, the inputs and Spore's outputs. The driver writes every tensor as .npy plus one
// manifest line per case; check.py recomputes each case with PyTorch and compares.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <spore/spore.h>

namespace spore::oracle {

/// A JSON attribute value.
using AttrValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, std::vector<double>>;
using Attrs = std::vector<std::pair<std::string, AttrValue>>;

struct CaseOptions {
  double rtol = -1;  // < 0: the per-dtype default of check.py
  double atol = -1;
  /// Compare only shape and dtype (e.g. random ops checked by statistics elsewhere).
  bool shape_only = false;
};

class Writer {
 public:
  explicit Writer(std::string dir);
  ~Writer();
  /// Records one case. `op` names the Python function; `outputs` are what Spore computed.
  void add(const std::string& op, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
           const Attrs& attrs = {}, CaseOptions opt = {});
  /// Records that Spore refused the inputs (the Python side must refuse too).
  int cases() const { return count_; }

 private:
  std::string write_tensor(const Tensor& t);
  std::string dir_;
  FILE* manifest_ = nullptr;
  int count_ = 0;
  int files_ = 0;
};

/// Registers a family of cases; returns true so it can initialize a static.
bool register_family(const std::string& name, std::function<void(Writer&)> fn);

// Deterministic inputs (std::mt19937, independent of Spore's own generator).
enum class Fill {
  Normal,     // N(0, 1)
  Positive,   // in [0.1, 3]
  Unit,       // in (-1, 1) strictly (asin, atanh, erfinv)
  Edge,       // normal values plus NaN, +-Inf, +-0, large and tiny values
  Int,        // integers in [-20, 20] (or [0, 20] for unsigned); for float dtypes too
  Bool,
  Index,      // integers in [0, bound) for index inputs: see rand_index
};
Tensor rand_tensor(const Shape& shape, DType dtype, uint64_t seed, Fill fill = Fill::Normal);
Tensor rand_index(const Shape& shape, int64_t bound, uint64_t seed);
/// The same values as `t` but as a non-contiguous view (every other element of a larger buffer
/// along the last axis, then transposed back and forth when rank >= 2).
Tensor non_contiguous(const Tensor& t);

/// dtypes grouped for tables.
inline const std::vector<DType> kFloatTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
inline const std::vector<DType> kIntTypes = {DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64};

}  // namespace spore::oracle

#define SPORE_ORACLE_FAMILY(name) \
  static void oracle_family_##name(::spore::oracle::Writer& w); \
  [[maybe_unused]] static const bool oracle_registered_##name = \
      ::spore::oracle::register_family(#name, &oracle_family_##name); \
  static void oracle_family_##name(::spore::oracle::Writer& w)
