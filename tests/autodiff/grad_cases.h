// SPDX-License-Identifier: Apache-2.0
#pragma once
// The gradient-check table, generated per primitive family (tests/autodiff/cases_<family>.cc).
// One table serves two checks:
//  - tests/autodiff/gradcheck_test.cc: reverse and forward mode against central finite
//    differences in float64 up to `order`, jvp/vjp agreement, and registry coverage (every
//    primitive with a rule is exercised; every differentiable primitive has rules);
//  - the PyTorch oracle (tests/oracle/cases_grad.cc): Spore's vjp in float32 against
//    torch.autograd.grad of the oracle's own torch function for `oracle_op` with `attrs`.
#include <functional>
#include <string>
#include <vector>

#include "oracle/oracle.h"
#include "spore/spore.h"

namespace spore::gradcheck {

struct GradCase {
  /// Unique label, "<primitive>/<variant>" (e.g. "mul/broadcast").
  std::string name;
  /// Primitives the case must exercise (checked: each is recorded on the tape).
  std::vector<std::string> prims;
  /// The function, built with public ops from `inputs`. It returns one tensor; for
  /// multi-output ops return the output under test (see out_index).
  std::function<Tensor(const std::vector<Tensor>&)> fn;
  /// Float64 inputs; non-floating inputs (indices) are allowed and never differentiated.
  std::vector<Tensor> inputs;
  /// Positions differentiated (empty: every floating input).
  std::vector<int> wrt;
  /// Highest order checked against finite differences (2 for smooth ops; 1 for ops whose second
  /// derivative is zero almost everywhere, e.g. relu, max, sort; 0: no finite-difference check,
  /// e.g. non-smooth at the sample).
  int order = 2;
  /// Relative tolerance for finite differences (float64, step 1e-6 scaled).
  double fd_rtol = 1e-6;
  /// Key of the torch function in tests/oracle/torch_ops (empty: no PyTorch comparison) and its
  /// attributes, exactly as the op's oracle cases pass them.
  std::string oracle_op;
  oracle::Attrs attrs;
  /// When the torch function returns a tuple: the element fn's result corresponds to.
  int out_index = 0;
};

/// A float64 input for a case (the oracle's deterministic generator).
inline Tensor R(const Shape& s, uint64_t seed, oracle::Fill fill = oracle::Fill::Normal) {
  return oracle::rand_tensor(s, DType::Float64, seed, fill);
}

/// gtest-safe names of all_cases() ([A-Za-z0-9_]; a repeated name gets a suffix), by index:
/// for INSTANTIATE_TEST_SUITE_P over the table.
const std::vector<std::string>& case_test_names();

/// Registers a family's cases; returns true so it can initialize a static.
bool register_cases(const char* family, std::function<void(std::vector<GradCase>&)> fn);
/// Every registered case (built once, in family-name order).
const std::vector<GradCase>& all_cases();

}  // namespace spore::gradcheck

#define SPORE_GRAD_CASES(family)                                                            \
  static void grad_cases_##family(std::vector<::spore::gradcheck::GradCase>& cases);        \
  [[maybe_unused]] static const bool grad_cases_registered_##family =                       \
      ::spore::gradcheck::register_cases(#family, &grad_cases_##family);                    \
  static void grad_cases_##family(std::vector<::spore::gradcheck::GradCase>& cases)
