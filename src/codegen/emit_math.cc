// SPDX-License-Identifier: Apache-2.0
#include "codegen/emit_math.h"

#include <cstdint>
#include <cstdio>
#include <vector>

#include "spore/error.h"

namespace spore::codegen {
namespace {

// A constant given by its IEEE bits, as xsimd's tables give them.
std::string bits(uint64_t b, bool f32) {
  char buf[64];
  if (f32) std::snprintf(buf, sizeof buf, "__builtin_bit_cast(float, 0x%08xu)", static_cast<unsigned>(b));
  else std::snprintf(buf, sizeof buf, "__builtin_bit_cast(double, 0x%016llxull)", static_cast<unsigned long long>(b));
  return buf;
}

// xsimd's detail::horner<c0, c1, ..., cn>(x) = fma(x, horner<c1, ..., cn>(x), c0).
std::string horner(const std::string& x, const std::vector<uint64_t>& c, bool f32) {
  std::string e = bits(c.back(), f32);
  const char* fma = f32 ? "__builtin_fmaf(" : "__builtin_fma(";
  for (size_t i = c.size() - 1; i-- > 0;) e = std::string(fma) + x + ", " + e + ", " + bits(c[i], f32) + ")";
  return e;
}

// detail::exp<exp_tag> for float: reduce by k*ln2 (hi/lo, fnma), degree-5 polynomial, scale by
// 2^k built from the exponent bits, then the minlog/maxlog cut-offs.
std::string exp_f32() {
  return "static inline float spore_exp_f32(float a) {\n"
         "  const float k = __builtin_rintf(1.442695040888963407359924681001892137426645954152986f * a);\n"
         "  float x = __builtin_fmaf(-k, " + bits(0x3f318000, true) + ", a);\n"
         "  x = __builtin_fmaf(-k, " + bits(0xb95e8083, true) + ", x);\n"
         "  const float y = " + horner("x", {0x3f000000, 0x3e2aa9a5, 0x3d2aa957, 0x3c098d8b, 0x3ab778cf}, true) + ";\n"
         "  x = __builtin_fmaf(y, x * x, x) + 1.0f;\n"
         // (int)k is only defined in range; out of range the selects below decide the result.
         "  const int ki = (k >= -256.0f && k <= 256.0f) ? (int)k : 0;\n"
         "  x = a <= -88.3762626647949f ? 0.0f : x * __builtin_bit_cast(float, (unsigned)(ki + 127) << 23);\n"
         "  return a >= 88.3762626647949f ? __builtin_inff() : x;\n"
         "}\n\n";
}

std::string exp_f64() {
  return "static inline double spore_exp_f64(double a) {\n"
         "  const double k = __builtin_rint(1.442695040888963407359924681001892137426645954152986 * a);\n"
         "  const double hi = __builtin_fma(-k, " + bits(0x3fe62e42fee00000ull, false) + ", a);\n"
         "  const double lo = k * " + bits(0x3dea39ef35793c76ull, false) + ";\n"
         "  const double x = hi - lo;\n"
         "  const double t = x * x;\n"
         "  double c = __builtin_fma(-t, " +
         horner("t", {0x3fc555555555553eull, 0xbf66c16c16bebd93ull, 0x3f11566aaf25de2cull, 0xbebbbd41c5d26bf1ull,
                      0x3e66376972bea4d0ull}, false) + ", x);\n"
         "  c = 1.0 - (((lo - (x * c) / (2.0 - c)) - hi));\n"
         "  const long ki = (k >= -4096.0 && k <= 4096.0) ? (long)k : 0;\n"
         "  c = a <= -708.3964185322641 ? 0.0 : c * __builtin_bit_cast(double, (unsigned long)(ki + 1023) << 52);\n"
         "  return a >= 709.78271289338400 ? __builtin_inf() : c;\n"
         "}\n\n";
}

// xsimd's erf for float: a polynomial in x^2 below 2/3, else 1 - exp(-x^2) * erfc2(x/(1+x) - 0.4).
// xsimd skips a branch when no lane needs it; every lane's value is the same either way.
std::string erf_f32() {
  return "static inline float spore_erf_f32(float a) {\n"
         "  const float x = __builtin_fabsf(a);\n"
         "  const float xx = x * x;\n"
         "  const float r1 = a * " +
         horner("xx", {0x3f906eba, 0xbec0937e, 0x3de70f22, 0xbcdb61f4, 0x3ba4468d, 0xba1fc83b}, true) + ";\n"
         "  float z = x / (1.0f + x);\n"
         "  z -= 0.4f;\n"
         "  float r2 = 1.0f - spore_exp_f32(-x * x) * " +
         horner("z", {0x3f0a0e8b, 0xbf918a62, 0x3e243828, 0x3ec4ca6e, 0x3e1175c7, 0x3e2006f0, 0xbfaea865, 0x4050b063,
                      0xc0cd1a85, 0x40d67e3b, 0xc0283611}, true) + ";\n"
         "  r2 = a < 0.0f ? -r2 : r2;\n"
         "  const float r = x < 2.0f / 3.0f ? r1 : r2;\n"
         "  const float s = (a > 0.0f ? 1.0f : 0.0f) - (a < 0.0f ? 1.0f : 0.0f);\n"
         "  return x == __builtin_inff() ? s : r;\n"
         "}\n\n";
}

std::string erf_f64() {
  return "static inline double spore_erf_f64(double a) {\n"
         "  const double x = __builtin_fabs(a);\n"
         "  const double xx = x * x;\n"
         "  double r1 = a * (" +
         horner("xx", {0x3ff20dd750429b61ull, 0x3fc16500f106c0a5ull, 0x3fa4a59a4f02579cull, 0x3f53b7664358865aull,
                       0x3f110512d5b20332ull}, false) + " / " +
         horner("xx", {0x3ff0000000000000ull, 0x3fdd0a84eb1ca867ull, 0x3fb64536ca92ea2full, 0x3f8166f75999dbd1ull,
                       0x3f37ea4332348252ull}, false) + ");\n"
         "  const double ex = spore_exp_f64(-xx);\n"
         "  const double z2 = 1.0 - ex * (" +
         horner("x", {0x3feffffffbbb552bull, 0x3ff54dfe9b258a60ull, 0x3fec1986509e687bull, 0x3fd53dd7a67c7e9full,
                      0x3fb2488a6b5cb5e5ull, 0x3f7cf4cfe0aacbb4ull, 0x0ull}, false) + " / " +
         horner("x", {0x3ff0000000000000ull, 0x4003adeae79b9708ull, 0x40053b1052dca8bdull, 0x3ff9e677c2777c3cull,
                      0x3fe307622fcff772ull, 0x3fc033c113a7deeeull, 0x3f89a996639b0d00ull}, false) + ");\n"
         "  r1 = x < 0.65 ? r1 : (a < 0.0 ? -z2 : z2);\n"
         "  double z = 1.0 - ex * (" +
         horner("x", {0x3fefff5a9e697ae2ull, 0x3ff9fa202deb88e5ull, 0x3ff44744306832aeull, 0x3fe29be1cff90d94ull,
                      0x3fc42210f88b9d43ull, 0x3f971d0907ea7a92ull, 0x0ull}, false) + " / " +
         horner("x", {0x3ff0000000000000ull, 0x400602f24bf3fdb6ull, 0x400afd487397568full, 0x400315ffdfd5ce91ull,
                      0x3ff0cfd4cb6cde9full, 0x3fd1d7ab774bb837ull, 0x3fa47bd61bbb3843ull}, false) + ");\n"
         "  z = a < 0.0 ? -z : z;\n"
         "  const double s = (a > 0.0 ? 1.0 : 0.0) - (a < 0.0 ? 1.0 : 0.0);\n"
         "  z = x == __builtin_inf() ? s : z;\n"
         "  return x < 2.2 ? r1 : z;\n"
         "}\n\n";
}

}  // namespace

std::string emit_math_helpers(const std::set<std::string>& names) {
  std::set<std::string> need = names;
  // erf calls exp of its type.
  if (need.count("erf_f32")) need.insert("exp_f32");
  if (need.count("erf_f64")) need.insert("exp_f64");
  std::string out;
  // Callees first.
  if (need.count("exp_f32")) out += exp_f32();
  if (need.count("exp_f64")) out += exp_f64();
  if (need.count("erf_f32")) out += erf_f32();
  if (need.count("erf_f64")) out += erf_f64();
  for (const std::string& n : need)
    SPORE_ASSERT(n == "exp_f32" || n == "exp_f64" || n == "erf_f32" || n == "erf_f64", "emit_math: no helper '", n, "'");
  return out;
}

}  // namespace spore::codegen
