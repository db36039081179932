// SPDX-License-Identifier: Apache-2.0
#pragma once
// Programs and shapes shared by the kernel generator's tests (interpreter and emitted kernels),
// and a runner for a loop program over tensors.
#include <random>
#include <vector>

#include "codegen/loop_program.h"
#include "codegen_testing.h"
#include "core/primitive.h"

namespace spore::codegen::testing {

struct Program {
  const char* name;
  int inputs;
  bool exact;
  Fn fn;
};

// A random shape for each input that broadcasts to `out`: the scalar, a row, a column, the
// full shape, or dims dropped at random.
inline Shape broadcast_shape(const Shape& out, int kind, std::mt19937& rng) {
  const int nd = static_cast<int>(out.size());
  switch (kind % 5) {
    case 0: return {};
    case 1: return {out[nd - 1]};
    case 2: {
      Shape s = out;
      s[nd - 1] = 1;
      return s;
    }
    case 3: return out;
    default: {
      Shape s = out;
      for (int d = 0; d < nd; ++d)
        if (rng() % 2) s[d] = 1;
      return s;
    }
  }
}

/// Every op class the loop program has; `transcendental` holds ops the emitter does not port.
inline std::vector<Program> emitter_programs() {
  using namespace ops;
  return {
      {"arith", 4, true, [](const std::vector<Tensor>& x) {
         Tensor t = x[0] * x[1] + x[2];
         Tensor u = maximum(t, x[3]) - minimum(x[0], x[2]);
         return std::vector<Tensor>{where(x[0] > x[1], u, t / x[3]), abs(u) * -0.5, -x[1]};
       }},
      {"select_clamp_lerp", 3, true, [](const std::vector<Tensor>& x) {
         Tensor c = clamp(x[0], x[1], x[2]);
         Tensor l = lerp(x[0], x[1], x[2]);
         return std::vector<Tensor>{c + l, floor(c) - sqrt(abs(l)), relu(x[1] - x[0] * 0.5)};
       }},
      {"exact_unary", 2, true, [](const std::vector<Tensor>& x) {
         Tensor a = hardswish(x[0]) + relu6(x[1]) * leaky_relu(x[0], 0.2) + hardsigmoid(x[1]) - rsqrt(abs(x[0]));
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
      {"exp_erf_silu", 2, false, [](const std::vector<Tensor>& x) {
         return std::vector<Tensor>{exp(x[0] * 0.25) + erf(x[1]) - silu(x[0]), exp(x[1] * 40.0), erf(x[0] * 3.0)};
       }},
  };
}

/// Buffers over tensors, for run_loop_program and compiled kernels.
inline std::vector<Buffer> buffers(const std::vector<Tensor>& ts) {
  std::vector<Buffer> b;
  for (const Tensor& t : ts) b.push_back({t.data_ptr(), t.dtype(), static_cast<int>(t.dim()), t.shape().data(), t.strides().data()});
  return b;
}

/// Empty outputs of `p` over `shape`.
inline std::vector<Tensor> outputs_of(const LoopProgram& p, const Shape& shape) {
  std::vector<Tensor> outs;
  for (DType dt : p.outputs) outs.push_back(Tensor::empty(shape, dt));
  return outs;
}

}  // namespace spore::codegen::testing
