// SPDX-License-Identifier: Apache-2.0
// einsum: parse the equation, take diagonals for repeated subscripts, sum out subscripts used
// once, then contract operands left to right as batched matmuls (permute/reshape + GEMM), so
// every contraction runs on the oneDNN matmul kernel.
#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "ops/promote.h"
#include "spore/ops/creation.h"
#include "spore/ops/linalg.h"
#include "spore/ops/shape.h"

namespace spore::ops {
namespace {

struct Term {
  std::string idx;  // one letter per dim of t
  Tensor t;
};

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

Dim size_of(const Term& x, char c) { return x.t.shape()[x.idx.find(c)]; }

// x permuted so its dims follow `order` (a permutation of x.idx), then reshaped to `groups`
// (each group a run of letters merged into one dim).
Tensor arrange(const Term& x, const std::vector<std::string>& groups) {
  std::vector<int64_t> perm;
  Shape merged;
  for (const auto& g : groups) {
    Dim n = 1;
    for (char c : g) {
      perm.push_back(static_cast<int64_t>(x.idx.find(c)));
      n *= size_of(x, c);
    }
    merged.push_back(n);
  }
  return reshape(permute(x.t, perm), merged);
}

Shape dims_of(const Term& x, const std::string& letters) {
  Shape s;
  for (char c : letters) s.push_back(size_of(x, c));
  return s;
}

// Sums out the subscripts of x not in `keep` (a GEMV with a ones vector: no reduction op needed).
Term sum_out(Term x, const std::string& keep) {
  std::string kept, dropped;
  for (char c : x.idx) (has(keep, c) ? kept : dropped) += c;
  if (dropped.empty()) return x;
  Shape out_shape = dims_of(x, kept);
  Tensor m = arrange(x, {kept, dropped});
  Tensor ones_v = ones({m.shape()[1]}, {x.t.dtype()});
  return {kept, reshape(matmul(m, ones_v), out_shape)};
}

// Diagonal of each repeated subscript ("ii" -> "i"), as a view.
Term take_diagonals(Term x) {
  for (size_t p = 0; p < x.idx.size(); ++p) {
    size_t q = x.idx.find(x.idx[p], p + 1);
    if (q == std::string::npos) continue;
    char c = x.idx[p];
    x.t = diagonal(x.t, 0, static_cast<int64_t>(p), static_cast<int64_t>(q));
    x.idx.erase(q, 1);
    x.idx.erase(p, 1);
    x.idx += c;
    p = static_cast<size_t>(-1);  // rescan: positions moved
  }
  return x;
}

Term contract(Term a, Term b, const std::string& needed) {
  std::string keep_a = needed + b.idx, keep_b = needed + a.idx;
  a = sum_out(std::move(a), keep_a);
  b = sum_out(std::move(b), keep_b);
  std::string batch, con, fa, fb;
  for (char c : a.idx) {
    if (has(b.idx, c)) (has(needed, c) ? batch : con) += c;
    else fa += c;
  }
  for (char c : b.idx)
    if (!has(a.idx, c)) fb += c;
  Shape out = dims_of(a, batch);
  for (Dim d : dims_of(a, fa)) out.push_back(d);
  for (Dim d : dims_of(b, fb)) out.push_back(d);
  Tensor c = matmul(arrange(a, {batch, fa, con}), arrange(b, {batch, con, fb}));
  return {batch + fa + fb, reshape(c, out)};
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  SPORE_CHECK(eq.find("...") == std::string::npos, "[einsum] ellipsis ('...') is not supported in \"", equation,
              "\"; name every dimension");
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> subs(1);
  for (char c : lhs) {
    if (c == ',') subs.emplace_back();
    else {
      SPORE_CHECK(std::isalpha(static_cast<unsigned char>(c)), "[einsum] invalid character '", c, "' in \"",
                  equation, "\"; subscripts are letters, operands separated by ',' and the output after '->'");
      subs.back() += c;
    }
  }
  SPORE_CHECK(subs.size() == operands.size(), "[einsum] equation \"", equation, "\" names ", subs.size(),
              " operands but ", operands.size(), " were given");
  std::map<char, std::pair<Dim, size_t>> sizes;  // letter -> (size, first operand)
  std::vector<Term> terms;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Tensor& x = operands[i];
    SPORE_CHECK(x.defined(), "[einsum] operand ", i, " is an undefined tensor");
    SPORE_CHECK(static_cast<int64_t>(subs[i].size()) == x.dim(), "[einsum] operand ", i, " has shape ",
                shape_str(x.shape()), " but its subscripts \"", subs[i], "\" name ", subs[i].size(), " dims");
    for (size_t d = 0; d < subs[i].size(); ++d) {
      auto [it, fresh] = sizes.try_emplace(subs[i][d], x.shape()[d], i);
      SPORE_CHECK(fresh || it->second.first == x.shape()[d], "[einsum] subscript '", subs[i][d], "' has size ",
                  it->second.first, " in operand ", it->second.second, " but ", x.shape()[d], " in operand ", i,
                  " (shape ", shape_str(x.shape()), ")");
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
    for (size_t i = 0; i < out.size(); ++i) {
      SPORE_CHECK(sizes.count(out[i]), "[einsum] output subscript '", out[i], "' in \"", equation,
                  "\" appears in no operand");
      SPORE_CHECK(out.find(out[i], i + 1) == std::string::npos, "[einsum] output subscript '", out[i],
                  "' appears twice in \"", equation, "\"");
    }
  } else {  // implicit form: letters used exactly once, in alphabetical order
    for (auto& [c, v] : sizes)
      if (std::count(lhs.begin(), lhs.end(), c) == 1) out += c;
  }
  SPORE_CHECK(!operands.empty(), "[einsum] needs at least one operand");
  DType t = operands[0].dtype();
  for (auto& x : operands) t = promote_types(t, x.dtype());
  for (size_t i = 0; i < operands.size(); ++i) terms.push_back(take_diagonals({subs[i], to_dtype(operands[i], t)}));

  Term cur = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) {
    std::string needed = out;
    for (size_t j = i + 1; j < terms.size(); ++j) needed += terms[j].idx;
    cur = contract(std::move(cur), terms[i], needed);
  }
  cur = sum_out(std::move(cur), out);
  std::vector<int64_t> perm;
  for (char c : out) perm.push_back(static_cast<int64_t>(cur.idx.find(c)));
  return permute(cur.t, perm);  // a view when nothing was computed, as in PyTorch
}

}  // namespace spore::ops
