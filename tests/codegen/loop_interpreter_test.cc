// SPDX-License-Identifier: Apache-2.0
// The loop program and its interpreter against the unfused ops: graphs of elementwise ops are
// traced, lowered whole to one loop program and run on random shapes with broadcasting (scalar,
// row, column, full), both float dtypes, NaN/Inf inputs, sizes that leave partial tiles, several
// tile lengths and 1 and 2 threads. Reference: the same graph interpreted op by op.
//
// Tolerance: programs of IEEE-exact ops (arithmetic, comparisons, select, clamp, lerp, rounding,
// sqrt) must match bit for bit. Transcendental ones (exp, erf, tanh, pow ...) match bit for bit
// except where the unfused kernel ran its scalar tail (the last n % lanes elements of a
// contiguous run, which use libm while the vector body and every fused lane use xsimd's
// routine): there the difference is a few ulps of each op's result, which a later subtraction
// may turn into a larger relative error near zero; kTranscendentalEps bounds
// |fused - unfused| / max(1, |unfused|) in units of the dtype's epsilon (measured: see the
// test's printout, ~50 at most over these programs).
#include <gtest/gtest.h>

#include <iostream>

#include "codegen/loop_interpreter.h"
#include "codegen/loop_program.h"
#include "codegen/schedule.h"
#include "codegen_programs.h"
#include "transforms/interpreter.h"

namespace spore::codegen {
namespace {

using namespace ops;
using testing::broadcast_shape;
using testing::Fn;
using testing::Program;

constexpr double kTranscendentalEps = 256;

std::vector<Program> programs() {
  return {
      {"arith", 4, true, [](const std::vector<Tensor>& x) {
         Tensor t = x[0] * x[1] + x[2];
         Tensor u = maximum(t, x[3]) - minimum(x[0], x[2]);
         // Not neg: xsimd 8.1's AVX-512 neg is 0 - x, so the unfused kernel's vector body gives
         // +0 for neg(+0) while its scalar tail gives -0 (both paths are the unfused op's own).
         return std::vector<Tensor>{where(x[0] > x[1], u, t / x[3]), abs(u) * -0.5};
       }},
      {"select_clamp_lerp", 3, true, [](const std::vector<Tensor>& x) {
         Tensor c = clamp(x[0], x[1], x[2]);
         Tensor l = lerp(x[0], x[1], x[2]);
         return std::vector<Tensor>{c + l, floor(c) - sqrt(abs(l)), relu(x[1] - x[0] * 0.5)};
       }},
      {"exact_unary", 2, true, [](const std::vector<Tensor>& x) {
         Tensor a = hardswish(x[0]) + relu6(x[1]) * leaky_relu(x[0], 0.2);
         return std::vector<Tensor>{a * sign(x[1]) + round(x[0]) + trunc(x[1]) - ceil(a) + reciprocal(square(x[0]) + 1.0)};
       }},
      {"bools", 3, true, [](const std::vector<Tensor>& x) {
         Tensor m = logical_and(x[0] < x[1], logical_not(isnan(x[2])));
         Tensor k = logical_or(isinf(x[0]), equal(x[1], x[2]));
         Tensor f = where(logical_xor(m, k), x[0], x[2]) + cast(m, x[0].dtype());
         return std::vector<Tensor>{f, m, cast(f, DType::Bool), not_equal(isfinite(f), x[0] >= x[2])};
       }},
      {"gelu_bias_sigmoid", 4, false, [](const std::vector<Tensor>& x) {
         return std::vector<Tensor>{gelu(x[0] * x[1] + x[2]) * sigmoid(x[3])};
       }},
      {"transcendental", 3, false, [](const std::vector<Tensor>& x) {
         Tensor a = exp(x[0] * 0.25) + tanh(x[1]) - log1p(abs(x[2])) + erf(x[0]);
         Tensor b = softplus(x[1], 2.0, 5.0) + elu(x[2], 0.5) + silu(x[0]) + pow(abs(x[1]), x[2]) + atan2(x[0], x[1]);
         return std::vector<Tensor>{a, b * mish(x[2]), gelu(x[0], true) - sin(x[1]) * cos(x[2])};
       }},
  };
}


std::vector<Tensor> run_fused(const LoopProgram& p, const std::vector<Tensor>& in, const Shape& out_shape, int64_t tile) {
  std::vector<Buffer> ib, ob;
  std::vector<Tensor> outs;
  for (DType dt : p.outputs) outs.push_back(Tensor::empty(out_shape, dt));
  for (const Tensor& t : in) ib.push_back({t.data_ptr(), t.dtype(), static_cast<int>(t.dim()), t.shape().data(), t.strides().data()});
  for (const Tensor& t : outs) ob.push_back({t.data_ptr(), t.dtype(), static_cast<int>(t.dim()), t.shape().data(), t.strides().data()});
  Shape numel_shape = out_shape;
  int64_t n = 1;
  for (Dim d : numel_shape) n *= d;
  run_loop_program(p, make_schedule(p, n, tile), ib, ob);
  return outs;
}

class LoopInterpreter : public ::testing::Test {
 protected:
  void TearDown() override { set_num_threads(threads_); }
  int threads_ = num_threads();
};

TEST_F(LoopInterpreter, MatchesTheUnfusedOpsOnRandomBroadcastShapes) {
  std::mt19937 rng(1234);
  const std::vector<Shape> outs = {{1}, {7}, {1000}, {3, 517}, {129, 1}, {2, 3, 257}, {64, 64}, {5, 1, 300}, {70001}};
  double worst = 0;
  int cases = 0;
  for (const Program& prog : programs()) {
    for (DType dt : {DType::Float32, DType::Float64}) {
      for (size_t si = 0; si < outs.size(); ++si) {
        const Shape& out = outs[si];
        std::vector<Tensor> in;
        // One input has the full shape so the graph's outputs all have it.
        for (int i = 0; i < prog.inputs; ++i)
          in.push_back(testing::random_tensor(i == 0 ? out : broadcast_shape(out, static_cast<int>(rng() % 5), rng), dt, rng));
        std::string what = std::string(prog.name) + " " + dtype_name(dt).data() + " " + shape_str(out);
        for (size_t i = 0; i < in.size(); ++i) what += " in" + std::to_string(i) + shape_str(in[i].shape());
        SCOPED_TRACE(what);
        ir::GraphPtr g = testing::trace(prog.fn, in);
        LoopProgram p = lower(*g);
        std::vector<Tensor> want;
        for (int threads : {1, 2}) {
          set_num_threads(threads);
          if (want.empty()) want = transforms::interpret(*g, in);
          for (int64_t tile : {64, 512, 1024}) {
            auto got = run_fused(p, in, out, tile);
            ASSERT_EQ(got.size(), want.size());
            for (size_t j = 0; j < got.size(); ++j) {
              if (prog.exact) {
                EXPECT_TRUE(testing::same_bits(got[j], want[j])) << "output " << j << ", threads " << threads << ", tile "
                                                                 << tile << "\n" << p.str();
              } else {
                const double e = testing::max_error_eps(got[j], want[j]);
                worst = std::max(worst, e);
                EXPECT_LE(e, kTranscendentalEps) << "output " << j << ", threads " << threads << ", tile " << tile;
              }
            }
            ++cases;
          }
        }
      }
    }
  }
  std::cout << "[ codegen  ] " << cases << " runs; largest difference of transcendental programs: " << worst
            << " eps (|fused - unfused| / max(1, |unfused|))\n";
}

TEST_F(LoopInterpreter, AWholeContiguousRunMatchesTheUnfusedVectorLoopBitForBit) {
  // With n a multiple of the vector width and one thread, the unfused kernels take no scalar
  // tail, so even transcendental programs agree bit for bit.
  std::mt19937 rng(7);
  set_num_threads(1);
  for (const Program& prog : programs()) {
    for (DType dt : {DType::Float32, DType::Float64}) {
      SCOPED_TRACE(std::string(prog.name) + " " + dtype_name(dt).data());
      std::vector<Tensor> in;
      for (int i = 0; i < prog.inputs; ++i) in.push_back(testing::random_tensor({4096}, dt, rng));
      ir::GraphPtr g = testing::trace(prog.fn, in);
      auto want = transforms::interpret(*g, in);
      auto got = run_fused(lower(*g), in, {4096}, 512);
      for (size_t j = 0; j < got.size(); ++j) EXPECT_TRUE(testing::same_bits(got[j], want[j])) << "output " << j;
    }
  }
}

TEST(LoopProgram, ListsLoadsLiteralsOpsAndStores) {
  std::mt19937 rng(1);
  std::vector<Tensor> in{testing::random_tensor({8}, DType::Float32, rng), testing::random_tensor({8}, DType::Float32, rng)};
  ir::GraphPtr g = testing::trace([](const std::vector<Tensor>& x) {
    return std::vector<Tensor>{exp(x[0] * 2.0 + x[1]) > x[1]};
  }, in);
  EXPECT_EQ(lower(*g).str(),
            "loop program (float32, 4 registers, cost 11)\n"
            "  r0 = load in0 (float32)\n"
            "  r1 = load in1 (float32)\n"
            "  r2 = const 2\n"
            "  r3 = mul r0, r2\n"
            "  r3 = add r3, r1\n"
            "  r3 = exp r3\n"
            "  r3 = greater r3, r1\n"
            "  store out0 (bool) = r3\n");
}

TEST(LoopProgram, RejectsOpsOutsideItsTableNamingTheNode) {
  std::mt19937 rng(1);
  std::vector<Tensor> in{testing::random_tensor({4, 3}, DType::Float32, rng)};
  ir::GraphPtr g = testing::trace([](const std::vector<Tensor>& x) { return std::vector<Tensor>{exp(sum(x[0], {1}))}; }, in);
  try {
    (void)lower(*g);
    FAIL() << "lowered a reduction";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[fused] node 0 of sub-graph @main: op 'reduce_sum' is not in the loop program's op table"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace spore::codegen
