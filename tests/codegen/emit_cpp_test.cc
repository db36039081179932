// SPDX-License-Identifier: Apache-2.0
// Emitted C++ kernels against the loop interpreter (their reference): the same kind of programs
// the interpreter's own tests use, on random shapes with broadcasts (scalar, row, column, full),
// NaN/Inf inputs, sizes that leave partial chunks, float32 and float64, 1 and 2 threads.
//
// Tolerance: programs of IEEE-exact ops match the interpreter bit for bit (the kernels are
// compiled with -ffp-contract=off). Transcendental ones (exp, erf, sigmoid, silu, gelu) port
// xsimd's routines; the interpreter's copy of them is compiled by g++ with FMA contraction on,
// ours without, so they differ by a few ulps: the bound is the interpreter test's
// kTranscendentalEps (256 eps of |compiled - interpreted| / max(1, |interpreted|)).
#include <gtest/gtest.h>

#include <iostream>

#include "codegen/compiled_kernel.h"
#include "codegen/compiler.h"
#include "codegen/emit_cpp.h"
#include "codegen/loop_interpreter.h"
#include "codegen/schedule.h"
#include "codegen/tile_ops.h"
#include "codegen_programs.h"
#include "kernel_test_env.h"

namespace spore::codegen {
namespace {

using namespace ops;
using testing::broadcast_shape;
using testing::emitter_programs;

constexpr double kTranscendentalEps = 256;


class EmittedKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::use_test_kernel_cache();
    if (!host_compiler()) GTEST_SKIP() << "no C++ compiler (c++/g++) on PATH: compiled kernels cannot be checked";
  }
  void TearDown() override { set_num_threads(threads_); }
  testing::UseHostCompiler compiler_;  // the binary defaults to SPORE_CXX=none
  int threads_ = num_threads();
};

TEST_F(EmittedKernel, MatchesTheInterpreterOnRandomBroadcastShapes) {
  std::mt19937 rng(4321);
  const std::vector<Shape> outs = {{1}, {7}, {1000}, {3, 1030}, {129, 1}, {2, 3, 257}, {64, 64}, {5, 1, 300}, {70001}};
  double worst = 0;
  int cases = 0;
  for (const auto& prog : emitter_programs()) {
    for (DType dt : {DType::Float32, DType::Float64}) {
      // One kernel per program and dtype serves every shape (extents and strides are arguments).
      std::vector<Tensor> probe;
      for (int i = 0; i < prog.inputs; ++i) probe.push_back(testing::random_tensor({4}, dt, rng));
      const LoopProgram p = lower(*testing::trace(prog.fn, probe));
      std::string why;
      const KernelFn fn = compile_now(p, &why);
      ASSERT_NE(fn, nullptr) << prog.name << ": " << why << "\n" << p.str();
      for (const Shape& out : outs) {
        std::vector<Tensor> in;
        for (int i = 0; i < prog.inputs; ++i)
          in.push_back(testing::random_tensor(i == 0 ? out : broadcast_shape(out, static_cast<int>(rng() % 5), rng), dt, rng));
        std::string what = std::string(prog.name) + " " + dtype_name(dt).data() + " " + shape_str(out);
        for (size_t i = 0; i < in.size(); ++i) what += " in" + std::to_string(i) + shape_str(in[i].shape());
        SCOPED_TRACE(what);
        const LoopProgram q = lower(*testing::trace(prog.fn, in));
        ASSERT_EQ(q.str(), p.str());
        for (int threads : {1, 2}) {
          set_num_threads(threads);
          auto want = testing::outputs_of(p, out), got = testing::outputs_of(p, out);
          run_loop_program(p, make_schedule(p, want[0].numel()), testing::buffers(in), testing::buffers(want));
          run_compiled(fn, p, testing::buffers(in), testing::buffers(got));
          for (size_t j = 0; j < got.size(); ++j) {
            if (prog.exact) {
              EXPECT_TRUE(testing::same_bits(got[j], want[j])) << "output " << j << ", threads " << threads;
            } else {
              const double e = testing::max_error_eps(got[j], want[j]);
              worst = std::max(worst, e);
              EXPECT_LE(e, kTranscendentalEps) << "output " << j << ", threads " << threads;
            }
          }
          ++cases;
        }
      }
    }
  }
  std::cout << "[ codegen  ] " << cases << " compiled runs; largest difference of transcendental programs: " << worst
            << " eps (|compiled - interpreted| / max(1, |interpreted|))\n";
}

// Results of kStreamingStoreBytes and more are written by non-temporal stores on AVX2/AVX-512:
// rows whose start is not on a cache line (an odd inner size), two outputs, a 1-D run, an output
// written over its input, views at element offsets, float32 and float64 all match the
// interpreter bit for bit.
TEST_F(EmittedKernel, StreamingStoresOfLargeResultsMatchTheInterpreter) {
  std::mt19937 rng(7);
  auto f = [](const std::vector<Tensor>& x) {
    const Tensor m = x[0] * 0.9 + x[1];
    return std::vector<Tensor>{m, x[1] - m * 0.05};
  };
  const std::string isa = tile_kernels().isa;
  for (DType dt : {DType::Float32, DType::Float64}) {
  const int64_t big = kStreamingStoreBytes / static_cast<int64_t>(dtype_size(dt)) / 2 + 3;  // two outputs: just over
  // In 2-D the second input is a row broadcast down the rows, so rows of an odd length stay
  // rows (contiguous dims merge into one run) and most start off a cache line.
  for (const Shape& s : std::vector<Shape>{{big}, {big / 1031 + 1, 1031}, {3, 5, 7}}) {
    SCOPED_TRACE(shape_str(s) + " " + std::string(dtype_name(dt)));
    const Shape bs = s.size() == 2 ? Shape{1, s[1]} : s;
    const Tensor a = testing::random_tensor(s, dt, rng, false), b = testing::random_tensor(bs, dt, rng, false);
    const LoopProgram p = lower(*testing::trace(f, {a, b}));
    // The emitted unit has the streaming path on AVX2/AVX-512 (and only there).
    const KernelDecl decl{&p, "k", kEmitTile};
    const std::string src = emit_unit({&decl, 1});
    EXPECT_EQ(src.find("_stream(") != std::string::npos, isa == "avx512" || isa == "avx2") << isa;
    std::string why;
    const KernelFn fn = compile_now(p, &why);
    ASSERT_NE(fn, nullptr) << why;
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      auto want = testing::outputs_of(p, s), got = testing::outputs_of(p, s);
      run_loop_program(p, make_schedule(p, want[0].numel()), testing::buffers({a, b}), testing::buffers(want));
      run_compiled(fn, p, testing::buffers({a, b}), testing::buffers(got));
      for (size_t j = 0; j < 2; ++j) EXPECT_TRUE(testing::same_bits(got[j], want[j])) << j << ", threads " << threads;
      const Tensor in_place = a.clone();  // output 0 over input 0
      run_compiled(fn, p, testing::buffers({in_place, b}), testing::buffers({in_place, got[1]}));
      EXPECT_TRUE(testing::same_bits(got[1], want[1])) << "second output, in place, threads " << threads;
      EXPECT_TRUE(testing::same_bits(in_place, want[0])) << "in place, threads " << threads;
    }
    if (s.size() != 1) continue;
    // Outputs at element offsets into larger buffers, alike and unalike.
    for (int64_t shift : {1, 2}) {
      const Tensor o0 = zeros({s[0] + 1}, {dt}).slice(0, 1, s[0] + 1), o1 = zeros({s[0] + 2}, {dt}).slice(0, shift, s[0] + shift);
      auto want = testing::outputs_of(p, s);
      run_loop_program(p, make_schedule(p, want[0].numel()), testing::buffers({a, b}), testing::buffers(want));
      run_compiled(fn, p, testing::buffers({a, b}), testing::buffers({o0, o1}));
      EXPECT_TRUE(testing::same_bits(o0, want[0]) && testing::same_bits(o1, want[1])) << "shift " << shift;
    }
  }
  }
}

TEST_F(EmittedKernel, StridedAndBoolInputsAreStaged) {
  std::mt19937 rng(5);
  Tensor a = testing::random_tensor({40, 70}, DType::Float64, rng);
  Tensor at = a.transpose(0, 1);  // strided: inner stride 70
  Tensor m = testing::random_tensor({70, 40}, DType::Float64, rng) > 0.0;
  auto f = [](const std::vector<Tensor>& x) { return std::vector<Tensor>{where(x[1], x[0] * 2.0, exp(x[0]))}; };
  const LoopProgram p = lower(*testing::trace(f, {at, m}));
  std::string why;
  const KernelFn fn = compile_now(p, &why);
  ASSERT_NE(fn, nullptr) << why;
  auto want = testing::outputs_of(p, {70, 40}), got = testing::outputs_of(p, {70, 40});
  run_loop_program(p, make_schedule(p, 2800), testing::buffers({at, m}), testing::buffers(want));
  run_compiled(fn, p, testing::buffers({at, m}), testing::buffers(got));
  EXPECT_LE(testing::max_error_eps(got[0], want[0]), kTranscendentalEps);
}

// A ReLU-then-BatchNorm backward step as the fuser makes it: a contiguous bool mask, a bool and a
// float operand broadcast per channel ((1, C, 1, 1): stride 0 along every row), one broadcast
// along the rows only, and a transposed bool, each staged by its own loop (stride 0, stride 1,
// across rows), at partial chunks and with 1 and 2 threads, bit for bit against the interpreter.
TEST_F(EmittedKernel, BroadcastAndBoolOperandsMatchTheInterpreterBitForBit) {
  std::mt19937 rng(7);
  const Shape s{3, 5, 37, 41};
  const Tensor mask = testing::random_tensor(s, DType::Float32, rng) > 0.0;
  const Tensor dy = testing::random_tensor(s, DType::Float32, rng);
  const Tensor w = testing::random_tensor({1, 5, 1, 1}, DType::Float32, rng);
  const Tensor keep = testing::random_tensor({1, 5, 1, 1}, DType::Float32, rng) > 0.0;
  const Tensor row = testing::random_tensor({41}, DType::Float32, rng);
  const Tensor mt = (testing::random_tensor({3, 5, 41, 37}, DType::Float32, rng) > 0.0).transpose(2, 3);
  auto f = [](const std::vector<Tensor>& x) {
    const Tensor g = where(x[0], x[1] * 0.0, x[1]);
    return std::vector<Tensor>{g, where(x[3], g * x[2] + x[4], g - x[4]), where(x[5], g, x[2])};
  };
  const std::vector<Tensor> in{mask, dy, w, keep, row, mt};
  const LoopProgram p = lower(*testing::trace(f, in));
  std::string why;
  const KernelFn fn = compile_now(p, &why);
  ASSERT_NE(fn, nullptr) << why;
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    auto want = testing::outputs_of(p, s), got = testing::outputs_of(p, s);
    run_loop_program(p, make_schedule(p, want[0].numel()), testing::buffers(in), testing::buffers(want));
    run_compiled(fn, p, testing::buffers(in), testing::buffers(got));
    for (size_t k = 0; k < want.size(); ++k) EXPECT_TRUE(testing::same_bits(got[k], want[k])) << "output " << k << ", threads " << threads;
  }
  // And against the unfused ops.
  const auto ref = f(in);
  auto got = testing::outputs_of(p, s);
  run_compiled(fn, p, testing::buffers(in), testing::buffers(got));
  for (size_t k = 0; k < ref.size(); ++k) EXPECT_TRUE(testing::same_bits(got[k], ref[k].contiguous())) << "output " << k;
}

// Channels-last operands and results (a plan's layout between convs): the kernel iterates in
// its results' memory order and matches the interpreter on row-major buffers, compiled and
// interpreted, with a per-channel broadcast and a row-major operand read across the channels.
TEST_F(EmittedKernel, ChannelsLastResultsMatchRowMajorOnes) {
  std::mt19937 rng(8);
  const Shape s{2, 24, 5, 7}, nhwc{2, 5, 7, 24};
  auto cl = [&](const Tensor& t) { return t.permute({0, 3, 1, 2}); };  // (N, H, W, C) memory, (N, C, H, W) view
  const Tensor a = cl(testing::random_tensor(nhwc, DType::Float32, rng));
  const Tensor b = testing::random_tensor(s, DType::Float32, rng);  // row-major
  const Tensor w = testing::random_tensor({1, 24, 1, 1}, DType::Float32, rng);
  auto f = [](const std::vector<Tensor>& x) {
    const Tensor g = x[0] * x[2] + x[1];
    return std::vector<Tensor>{g, g * x[0] - x[2]};
  };
  const std::vector<Tensor> in{a, b, w};
  const LoopProgram p = lower(*testing::trace(f, in));
  std::string why;
  const KernelFn fn = compile_now(p, &why);
  ASSERT_NE(fn, nullptr) << why;
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    auto want = testing::outputs_of(p, s);
    run_loop_program(p, make_schedule(p, want[0].numel()), testing::buffers({a.contiguous(), b, w}), testing::buffers(want));
    std::vector<Tensor> got{cl(ops::zeros(nhwc)), cl(ops::zeros(nhwc))}, interp{cl(ops::zeros(nhwc)), cl(ops::zeros(nhwc))};
    run_compiled(fn, p, testing::buffers(in), testing::buffers(got));
    run_loop_program(p, make_schedule(p, want[0].numel()), testing::buffers(in), testing::buffers(interp));
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_TRUE(testing::same_bits(got[k].contiguous(), want[k])) << "compiled output " << k << ", threads " << threads;
      EXPECT_TRUE(testing::same_bits(interp[k].contiguous(), want[k])) << "interpreted output " << k << ", threads " << threads;
    }
  }
}

// An SGD-momentum update as the optimizer fuses it: the gradient read transposed (blocks of rows,
// partial ones included, under an outer dim) and both results written over their inputs (the
// plan donates them), against the interpreter out of place.
TEST_F(EmittedKernel, TransposedInputsAndInPlaceOutputsMatchTheInterpreter) {
  std::mt19937 rng(6);
  auto f = [](const std::vector<Tensor>& x) {
    const Tensor m = x[0] * 0.9 + x[1];
    return std::vector<Tensor>{m, x[2] - m * 0.05};
  };
  for (const Shape& s : std::vector<Shape>{{37, 50}, {3, 37, 50}, {512, 784}}) {
    SCOPED_TRACE(shape_str(s));
    Shape st = s;
    std::swap(st[st.size() - 1], st[st.size() - 2]);
    const Tensor buf = testing::random_tensor(s, DType::Float32, rng, false);
    const Tensor grad = testing::random_tensor(st, DType::Float32, rng, false).transpose(static_cast<int64_t>(s.size()) - 1, static_cast<int64_t>(s.size()) - 2);  // inner stride != 1
    const Tensor param = testing::random_tensor(s, DType::Float32, rng, false);
    const LoopProgram p = lower(*testing::trace(f, {buf, grad, param}));
    std::string why;
    const KernelFn fn = compile_now(p, &why);
    ASSERT_NE(fn, nullptr) << why;
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      auto want = testing::outputs_of(p, s);
      run_loop_program(p, make_schedule(p, want[0].numel()), testing::buffers({buf, grad, param}), testing::buffers(want));
      const Tensor b = buf.clone(), q = param.clone();
      const void* at[] = {b.data_ptr(), q.data_ptr()};
      run_compiled(fn, p, testing::buffers({b, grad, q}), testing::buffers({b, q}));
      EXPECT_EQ(b.data_ptr(), at[0]);
      EXPECT_EQ(q.data_ptr(), at[1]);
      EXPECT_TRUE(testing::same_bits(b, want[0])) << "momentum, threads " << threads;
      EXPECT_TRUE(testing::same_bits(q, want[1])) << "parameter, threads " << threads;
    }
  }
}

TEST(EmitCpp, EmitsNoIncludeAndOneExternCEntryPoint) {
  std::mt19937 rng(1);
  std::vector<Tensor> in{testing::random_tensor({8}, DType::Float32, rng), testing::random_tensor({8}, DType::Float32, rng)};
  const LoopProgram p = lower(*testing::trace([](const std::vector<Tensor>& x) {
    return std::vector<Tensor>{gelu(x[0]) * sigmoid(x[1]) > x[1]};
  }, in));
  ASSERT_EQ(emit_problem(p), "");
  const KernelDecl k{&p, "spore_kernel", 1024};
  const std::string src = emit_unit(std::span(&k, 1));
  EXPECT_EQ(src.find("#include"), std::string::npos) << src;
  EXPECT_NE(src.find("extern \"C\" void spore_kernel("), std::string::npos) << src;
  EXPECT_NE(src.find("static inline float spore_erf_f32(float a)"), std::string::npos) << src;
  EXPECT_EQ(src.find("double"), std::string::npos) << "a float32 program pulls in no float64 helper\n" << src;
}

TEST(EmitCpp, ProgramsWithOpsItDoesNotPortFallBack) {
  std::mt19937 rng(1);
  std::vector<Tensor> in{testing::random_tensor({8}, DType::Float32, rng)};
  const LoopProgram p = lower(*testing::trace([](const std::vector<Tensor>& x) {
    return std::vector<Tensor>{exp(x[0]) + tanh(x[0])};
  }, in));
  EXPECT_NE(emit_problem(p).find("has no emitted port"), std::string::npos) << emit_problem(p);
  std::string why;
  EXPECT_EQ(compile_now(p, &why), nullptr);
  EXPECT_NE(why.find("has no emitted port"), std::string::npos) << why;
}

}  // namespace
}  // namespace spore::codegen
