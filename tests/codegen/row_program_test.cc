// SPDX-License-Identifier: Apache-2.0
// Row programs (loop_program.h: fused groups with reductions over trailing dims) against the
// unfused ops: softmax, log_softmax with a mask, layer_norm and their gradients, traced, lowered
// whole and run by the interpreter on shapes whose rows are shorter than a vector, span partial
// tiles or several tiles, in both float dtypes, 1 and 2 threads, with NaN/Inf inputs.
//
// Tolerance: a row program folds a row as the unfused reductions do (chunks of 8192 by the same
// vector loop), so programs of IEEE-exact ops match the unfused ops bit for bit. Transcendental
// ones (exp, log) match except where the unfused kernel ran its scalar tail (libm against
// xsimd, as in loop_interpreter_test.cc): kTranscendentalEps bounds |fused - unfused| /
// max(1, |unfused|) in units of the dtype's epsilon. A wrong program is off by far more: a value
// of another row, a missing term or a stale register is an error of order 1 / eps.
#include <gtest/gtest.h>

#include <iostream>

#include "codegen/compiled_kernel.h"
#include "codegen/compiler.h"
#include "codegen/emit_cpp.h"
#include "codegen/loop_interpreter.h"
#include "codegen/loop_program.h"
#include "codegen/schedule.h"
#include "codegen_programs.h"
#include "kernel_test_env.h"
#include "transforms/interpreter.h"

namespace spore::codegen {
namespace {

using namespace ops;
using testing::Fn;

constexpr double kTranscendentalEps = 256;

// Input kinds: the full shape, one value per row (the last dim 1), one per column, a scalar.
enum Kind { Full, Row, Col, Scalar };

struct RowCase {
  const char* name;
  std::vector<Kind> inputs;
  int row_dims;
  bool exact;     // IEEE-exact ops only: equal to the unfused ops bit for bit
  bool nonempty;  // a max / min: rows of length 0 have none (the unfused reduction refuses them)
  Fn fn;
};

std::vector<RowCase> cases() {
  return {
      {"softmax", {Full}, 1, false, true, [](const std::vector<Tensor>& x) {
         Tensor e = exp(x[0] - amax(x[0], {-1}, true));
         return std::vector<Tensor>{e / sum(e, {-1}, true)};
       }},
      {"masked_log_softmax", {Full, Col}, 1, false, true, [](const std::vector<Tensor>& x) {
         Tensor z = x[0] * 0.125 + x[1];
         Tensor m = amax(z, {-1}, true);
         return std::vector<Tensor>{z - m - log(sum(exp(z - m), {-1}, true)), m};
       }},
      {"layer_norm", {Full, Col, Col}, 1, true, false, [](const std::vector<Tensor>& x) {
         Tensor mu = mean(x[0], {-1}, true);
         Tensor xc = x[0] - mu;
         Tensor rstd = rsqrt(mean(xc * xc, {-1}, true) + 1e-5);
         return std::vector<Tensor>{xc * rstd * x[1] + x[2], mu, rstd};
       }},
      {"layer_norm_backward", {Full, Full, Col, Row, Row}, 1, true, false, [](const std::vector<Tensor>& x) {
         // x, dy, gamma, the forward's mean and 1/std.
         Tensor xhat = (x[0] - x[3]) * x[4];
         Tensor gw = x[1] * x[2];
         Tensor a = mean(gw, {-1}, true), b = mean(gw * xhat, {-1}, true);
         return std::vector<Tensor>{x[4] * (gw - a - xhat * b), x[1] * xhat};
       }},
      {"softmax_backward", {Full, Full}, 1, true, false, [](const std::vector<Tensor>& x) {
         Tensor s = sum(x[0] * x[1], {-1}, true);
         return std::vector<Tensor>{x[0] * (x[1] - s)};
       }},
      {"two_row_dims_and_min", {Full, Scalar}, 2, true, true, [](const std::vector<Tensor>& x) {
         Tensor s = sum(x[0] * x[0], {-2, -1}, true);
         return std::vector<Tensor>{x[0] / sqrt(s + x[1]), amin(x[0] - x[1], {-2, -1}, true)};
       }},
      {"per_row_results_only", {Full, Full}, 1, true, false, [](const std::vector<Tensor>& x) {
         return std::vector<Tensor>{sum(x[0] * x[1], {-1}, true), mean(x[0] - x[1], {-1}, true) * 2.0};
       }},
  };
}

Shape shape_of(Kind k, const Shape& full, int row_dims) {
  Shape s = full;
  switch (k) {
    case Full: return full;
    case Row:
      for (size_t d = s.size() - static_cast<size_t>(row_dims); d < s.size(); ++d) s[d] = 1;
      return s;
    case Col: return {full.back()};
    default: return {};
  }
}

int64_t row_length(const Shape& full, int row_dims) {
  int64_t n = 1;
  for (size_t d = full.size() - static_cast<size_t>(row_dims); d < full.size(); ++d) n *= full[d];
  return n;
}

std::vector<Tensor> run_rows(const LoopProgram& p, const std::vector<Tensor>& in, const Shape& full, int64_t tile) {
  Shape row = full;
  for (size_t d = row.size() - static_cast<size_t>(p.row_dims); d < row.size(); ++d) row[d] = 1;
  std::vector<Tensor> outs;
  for (size_t j = 0; j < p.outputs.size(); ++j) outs.push_back(Tensor::empty(p.row_output[j] ? row : full, p.outputs[j]));
  auto ib = testing::buffers(in), ob = testing::buffers(outs);
  int64_t n = 1;
  for (Dim d : full) n *= d;
  run_loop_program(p, make_schedule(p, n, tile), ib, ob);
  return outs;
}

class RowProgram : public ::testing::Test {
 protected:
  void TearDown() override { set_num_threads(threads_); }
  int threads_ = num_threads();
};

TEST_F(RowProgram, MatchesTheUnfusedOps) {
  std::mt19937 rng(99);
  const std::vector<Shape> shapes = {{4, 7}, {3, 517}, {2, 3, 1500}, {2, 9000}, {129, 8}, {1, 64}, {5, 1, 33}, {0, 5}, {3, 0}};
  double worst = 0;
  int runs = 0;
  for (const RowCase& c : cases()) {
    for (DType dt : {DType::Float32, DType::Float64}) {
      for (const Shape& full : shapes) {
        if (c.nonempty && row_length(full, c.row_dims) == 0) continue;
        for (bool special : {false, true}) {
          std::vector<Tensor> in;
          for (Kind k : c.inputs) {
            Tensor t = testing::random_tensor(shape_of(k, full, c.row_dims), dt, rng, special);
            // A standard deviation's reciprocal is positive; a row of NaN keeps NaN.
            if (k == Row) t = abs(t) + 0.5;
            in.push_back(t);
          }
          SCOPED_TRACE(std::string(c.name) + " " + dtype_name(dt).data() + " " + shape_str(full) +
                       (special ? " with NaN/Inf" : ""));
          ir::GraphPtr g = testing::trace(c.fn, in);
          const LoopProgram p = lower(*g);
          ASSERT_EQ(p.row_dims, c.row_dims) << p.str();
          const auto want = transforms::interpret(*g, in);
          for (int threads : {1, 2}) {
            set_num_threads(threads);
            for (int64_t tile : {64, 512}) {
              const auto got = run_rows(p, in, full, tile);
              ASSERT_EQ(got.size(), want.size());
              for (size_t j = 0; j < got.size(); ++j) {
                if (c.exact) {
                  EXPECT_TRUE(testing::same_bits(got[j], want[j]))
                      << "output " << j << ", threads " << threads << ", tile " << tile << "\n" << p.str();
                  continue;
                }
                const double e = testing::max_error_eps(got[j], want[j]);
                worst = std::max(worst, e);
                EXPECT_LE(e, kTranscendentalEps) << "output " << j << ", threads " << threads << ", tile " << tile << "\n" << p.str();
              }
              ++runs;
            }
          }
        }
      }
    }
  }
  std::cout << "[ codegen  ] " << runs << " row program runs (IEEE-exact ones bit for bit); largest difference of "
            << "transcendental ones " << worst << " eps (|fused - unfused| / max(1, |unfused|))\n";
}

// The emitted kernel of each program (one per program and dtype, every shape) against the
// interpreter, 1 and 2 threads: both fold with the unfused reductions' loops, so exact programs
// agree bit for bit, transcendental ones within kTranscendentalEps (the emitter's port of exp is
// compiled without FMA contraction, emit_cpp_test.cc).
TEST_F(RowProgram, EmittedKernelsMatchTheInterpreter) {
  testing::use_test_kernel_cache();
  testing::UseHostCompiler compiler;
  if (!host_compiler()) GTEST_SKIP() << "no C++ compiler (c++/g++) on PATH: compiled kernels cannot be checked";
  std::mt19937 rng(17);
  const std::vector<Shape> shapes = {{4, 7}, {3, 517}, {2, 3, 1500}, {2, 9000}, {129, 8}, {5, 1, 33}, {0, 5}, {3, 0}};
  double worst = 0;
  int compiled = 0;
  for (const RowCase& c : cases()) {
    for (DType dt : {DType::Float32, DType::Float64}) {
      std::vector<Tensor> probe;
      for (Kind k : c.inputs) probe.push_back(testing::random_tensor(shape_of(k, {2, 3, 4}, c.row_dims), dt, rng));
      const LoopProgram p = lower(*testing::trace(c.fn, probe));
      // log has no emitted port: that program stays on the interpreter (emit_cpp.h).
      if (std::string(c.name) == "masked_log_softmax") {
        EXPECT_NE(emit_problem(p).find("has no emitted port"), std::string::npos) << emit_problem(p);
        continue;
      }
      std::string why;
      const KernelFn fn = compile_now(p, &why);
      ASSERT_NE(fn, nullptr) << c.name << ": " << why << "\n" << p.str();
      ++compiled;
      for (size_t si = 0; si < 2 * shapes.size(); ++si) {
        // Each shape without and with NaN/Inf (a row with a NaN is NaN whatever the order).
        const Shape& full = shapes[si / 2];
        if (c.nonempty && row_length(full, c.row_dims) == 0) continue;
        std::vector<Tensor> in;
        for (Kind k : c.inputs) {
          Tensor t = testing::random_tensor(shape_of(k, full, c.row_dims), dt, rng, si % 2 == 1);
          in.push_back(k == Row ? abs(t) + 0.5 : t);
        }
        SCOPED_TRACE(std::string(c.name) + " " + dtype_name(dt).data() + " " + shape_str(full));
        const auto want = run_rows(p, in, full, 512);
        for (int threads : {1, 2}) {
          set_num_threads(threads);
          Shape row = full;
          for (size_t d = row.size() - static_cast<size_t>(p.row_dims); d < row.size(); ++d) row[d] = 1;
          std::vector<Tensor> got;
          for (size_t j = 0; j < p.outputs.size(); ++j) got.push_back(Tensor::empty(p.row_output[j] ? row : full, p.outputs[j]));
          run_compiled(fn, p, testing::buffers(in), testing::buffers(got));
          for (size_t j = 0; j < got.size(); ++j) {
            if (c.exact) {
              EXPECT_TRUE(testing::same_bits(got[j], want[j])) << "output " << j << ", threads " << threads;
              continue;
            }
            const double e = testing::max_error_eps(got[j], want[j]);
            worst = std::max(worst, e);
            EXPECT_LE(e, kTranscendentalEps) << "output " << j << ", threads " << threads;
          }
        }
      }
    }
  }
  EXPECT_EQ(compiled, 12);
  std::cout << "[ codegen  ] " << compiled << " emitted row kernels: largest difference from the interpreter " << worst
            << " eps\n";
}

TEST(RowProgramLowering, SoftmaxIsThreeElementPassesAroundPerRowResults) {
  std::mt19937 rng(1);
  std::vector<Tensor> in{testing::random_tensor({4, 8}, DType::Float32, rng)};
  ir::GraphPtr g = testing::trace(cases()[0].fn, in);
  // The max, then the sum of exp(x - max), then the quotient: x is loaded and exp(x - max)
  // computed again in each pass instead of being written out between them.
  EXPECT_EQ(lower(*g).str(),
            "loop program (float32, 4 registers, cost 21)\n"
            "  rows over the last 1 dims, 2 accumulators\n"
            " per element:\n"
            "  r0 = load in0 (float32)\n"
            "  acc0 max= r0\n"
            " per row:\n"
            "  r1 = result acc0\n"
            " per element:\n"
            "  r0 = load in0 (float32)\n"
            "  r2 = splat r1\n"
            "  r2 = sub r0, r2\n"
            "  r2 = exp r2\n"
            "  acc1 sum= r2\n"
            " per row:\n"
            "  r3 = result acc1\n"
            " per element:\n"
            "  r2 = load in0 (float32)\n"
            "  r0 = splat r1\n"
            "  r0 = sub r2, r0\n"
            "  r0 = exp r0\n"
            "  r2 = splat r3\n"
            "  r2 = div r0, r2\n"
            "  store out0 (float32) = r2\n");
}

TEST(RowProgramLowering, RefusesReductionsOfDifferentRows) {
  std::mt19937 rng(1);
  std::vector<Tensor> in{testing::random_tensor({4, 3, 5}, DType::Float32, rng)};
  ir::GraphPtr g = testing::trace([](const std::vector<Tensor>& x) {
    return std::vector<Tensor>{x[0] - sum(x[0], {-1}, true) + sum(x[0], {-2, -1}, true)};
  }, in);
  try {
    (void)lower(*g);
    FAIL() << "lowered reductions over different dims into one row program";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("its reductions differ in the dims they reduce"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace spore::codegen
