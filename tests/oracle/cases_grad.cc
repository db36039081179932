// SPDX-License-Identifier: Apache-2.0
// Gradient oracle: each case of the gradient-check table (tests/autodiff/grad_cases.h) that
// names a torch function becomes a case "grad:<oracle_op>": the inputs in float32 (integer
// inputs unchanged) plus a random float32 cotangent of the output; Spore's outputs are the
// vjp's cotangents of the differentiated inputs. check.py runs the torch function with those
// inputs as leaves and compares torch.autograd.grad.
#include <algorithm>
#include <cstdio>
#include <exception>

#include "autodiff/grad_cases.h"
#include "oracle.h"

namespace spore::oracle {
namespace {

std::vector<int> positions(const gradcheck::GradCase& c) {
  if (!c.wrt.empty()) return c.wrt;
  std::vector<int> p;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (is_floating(c.inputs[i].dtype())) p.push_back(static_cast<int>(i));
  return p;
}

// Attribute strings go into JSON unescaped.
std::string json_safe(std::string s) {
  std::replace_if(s.begin(), s.end(), [](char ch) { return ch == '"' || ch == '\\' || ch == '\n'; }, '\'');
  return s;
}

}  // namespace

SPORE_ORACLE_FAMILY(grad) {
  uint64_t seed = 5000;
  for (const gradcheck::GradCase& c : gradcheck::all_cases()) {
    if (c.oracle_op.empty()) continue;
    std::vector<Tensor> xs;
    for (const Tensor& x : c.inputs) {
      if (!is_floating(x.dtype())) {
        xs.push_back(x);
        continue;
      }
      Tensor f = x.to(DType::Float32);
      xs.push_back(x.is_contiguous() ? f : non_contiguous(f));
    }
    const auto pos = positions(c);
    Attrs attrs = c.attrs;
    attrs.emplace_back("wrt", std::vector<int64_t>(pos.begin(), pos.end()));
    attrs.emplace_back("out_index", int64_t{c.out_index});
    attrs.emplace_back("_case", json_safe(c.name));  // for the report
    const std::string op = "grad:" + c.oracle_op;
    try {
      auto fn = [&c](const std::vector<TensorTree>& a) {
        std::vector<Tensor> ts;
        for (const auto& t : a) ts.push_back(t.tensor());
        return TensorTree(c.fn(ts));
      };
      auto r = autodiff::vjp("oracle grad", fn, {xs.begin(), xs.end()}, pos, false, false);
      const Tensor& y = r.out.tensor();
      Tensor ct = rand_tensor(y.shape(), y.dtype(), seed++);
      std::vector<Tensor> grads;
      for (const auto& g : r.pullback(TensorTree(ct))) grads.push_back(g.tensor());
      std::vector<Tensor> ins = xs;
      ins.push_back(ct);
      w.add(op, ins, grads, attrs);
    } catch (const std::exception& e) {
      // Recorded, not skipped: check.py reports it as a disagreement.
      attrs.emplace_back("_spore_error", json_safe(e.what()));
      w.add(op, xs, {}, attrs);
    }
  }
}

}  // namespace spore::oracle
