// SPDX-License-Identifier: Apache-2.0
#include "codegen/emit_cpp.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "codegen/emit_math.h"
#include "codegen/tile_ops.h"
#include "spore/error.h"

namespace spore::codegen {
namespace {

using cpu::BinaryOp;
using cpu::UnaryOp;

// A literal of the compute type, exact: hex floats, and builtins for what has no literal.
std::string lit(double v, bool f32) {
  if (std::isnan(v)) return f32 ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + (f32 ? "__builtin_inff()" : "__builtin_inf()");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", f32 ? static_cast<double>(static_cast<float>(v)) : v);
  return std::string("(") + buf + (f32 ? "f)" : ")");
}

// The math helper a unary op needs (empty: none), or "?" when it has no faithful port.
std::string unary_helper(UnaryOp op) {
  switch (op) {
    case UnaryOp::exp: case UnaryOp::sigmoid: case UnaryOp::silu: return "exp";
    case UnaryOp::erf: case UnaryOp::gelu: return "erf";
    case UnaryOp::neg: case UnaryOp::abs: case UnaryOp::sign: case UnaryOp::sqrt: case UnaryOp::rsqrt:
    case UnaryOp::reciprocal: case UnaryOp::square: case UnaryOp::relu: case UnaryOp::relu6:
    case UnaryOp::leaky_relu: case UnaryOp::hardswish: case UnaryOp::hardsigmoid: case UnaryOp::floor:
    case UnaryOp::ceil: case UnaryOp::round: case UnaryOp::trunc:
      return "";
    default:
      return "?";
  }
}

// The staging of one operand's work item into a stage of `cw` columns per row, shared by every
// kernel of the unit (emitting the loops per operand made each kernel several times larger and
// the unit slower to compile): nr rows by n columns with element strides rs across rows and st
// along them. A broadcast operand (st 0) is one value per row; a row read along its length
// (st 1) is a copy (a conversion from bool); one read across rows (rs 1: a transposed view) is
// staged column by column, so each cache line is read once; anything else element by element.
std::string stage_helper(bool f32, bool from_bool) {
  const std::string T = f32 ? "float" : "double", src = from_bool ? "unsigned char" : T;
  const std::string conv = from_bool ? " != 0 ? (" + T + ")1 : (" + T + ")0" : "";
  std::ostringstream os;
  os << "__attribute__((noinline)) static void spore_stage" << (from_bool ? "_bool" : "") << (f32 ? "_f32" : "_f64")
     << "(" << T << "* __restrict s, const " << src << "* __restrict b, long n, long nr, long st, long rs, long cw) {\n"
     << "  if (st == 0) {\n"
     << "    for (long r = 0; r < nr; ++r) {\n"
     << "      const " << T << " v = b[r * rs]" << conv << ";\n"
     << "      for (long j = 0; j < n; ++j) s[r * cw + j] = v;\n"
     << "    }\n"
     << "  } else if (st == 1) {\n"
     << "    for (long r = 0; r < nr; ++r)\n"
     << "      for (long j = 0; j < n; ++j) s[r * cw + j] = b[r * rs + j]" << conv << ";\n"
     << "  } else if (rs == 1 && nr > 1) {\n"
     << "    for (long j = 0; j < n; ++j)\n"
     << "      for (long r = 0; r < nr; ++r) s[r * cw + j] = b[j * st + r]" << conv << ";\n"
     << "  } else {\n"
     << "    for (long r = 0; r < nr; ++r)\n"
     << "      for (long j = 0; j < n; ++j) s[r * cw + j] = b[r * rs + j * st]" << conv << ";\n"
     << "  }\n"
     << "}\n\n";
  return os.str();
}

// The row programs' fold loops, passed by the driver (compiled_kernel.cc, RowFolds): the unfused
// reductions' own vector loops, so a compiled row sum has the unfused sum's bits.
std::string fold_types(bool f32) {
  const std::string T = f32 ? "float" : "double", S = f32 ? "_f32" : "_f64";
  return "typedef struct { " + T + " (*sum)(const " + T + "*, long); " + T + " (*max)(const " + T + "*, long); " + T +
         " (*min)(const " + T + "*, long); } spore_folds" + S + ";\n\n";
}

// Per-kernel text writer. `T` is the compute type's C++ name, `S` the math helpers' suffix.
class KernelWriter {
 public:
  KernelWriter(const LoopProgram& p, std::ostringstream& os) : p_(p), os_(os), f32_(p.dtype == DType::Float32) {
    T_ = f32_ ? "float" : "double";
    S_ = f32_ ? "_f32" : "_f64";
    // xsimd 8.1's AVX-512 neg is 0 - x (+0 for neg(+0)); the interpreter runs it, so match it.
    const std::string isa = tile_kernels().isa;
    neg_is_sub_ = isa == "avx512";
    // Streaming stores of whole vectors (GCC builtins: no #include needed); bool outputs never.
    vec_bytes_ = isa == "avx512" ? 64 : isa == "avx2" ? 32 : 0;
    for (DType t : p_.outputs) vec_bytes_ = t == DType::Bool ? 0 : vec_bytes_;
    if (p_.outputs.empty()) vec_bytes_ = 0;
  }

  void write(const std::string& symbol, int64_t tile) {
    const size_t ni = p_.inputs.size(), no = p_.outputs.size();
    auto params = [&] {
      os_ << "(long n";
      for (size_t k = 0; k < ni; ++k) os_ << ", const " << T_ << "* __restrict i" << k;
      for (size_t j = 0; j < no; ++j)
        os_ << ", " << (p_.outputs[j] == DType::Bool ? "unsigned char" : T_) << "* __restrict o" << j;
      os_ << ")";
    };
    // The body: one flat loop over restrict pointers.
    os_ << "__attribute__((noinline)) static void " << symbol << "_body";
    params();
    os_ << " {\n  for (long j = 0; j < n; ++j) {\n";
    for (int32_t r = 0; r < p_.num_registers; ++r) os_ << "    " << T_ << " r" << r << ";\n";
    for (const Instr& i : p_.code) os_ << "    " << instr(i) << "\n";
    os_ << "  }\n}\n\n";
    if (vec_bytes_ > 0) {
      // Streaming: the body writes a row's chunk into an aligned stage in L1, and this copies
      // it out with plain stores up to the destination's cache-line boundary (so streaming
      // stores fill whole lines), non-temporal vector stores after, and plain stores for the
      // tail. GCC has the movnt builtins; clang has __builtin_nontemporal_store.
      const long lanes = vec_bytes_ / (f32_ ? 4 : 8);
      const std::string V = symbol + "_vec";
      const char* nt = vec_bytes_ == 64 ? (f32_ ? "__builtin_ia32_movntps512" : "__builtin_ia32_movntpd512")
                                        : (f32_ ? "__builtin_ia32_movntps256" : "__builtin_ia32_movntpd256");
      os_ << "typedef " << T_ << " " << V << " __attribute__((__vector_size__(" << vec_bytes_ << ")));\n"
          << "static void " << symbol << "_stream(" << T_ << "* __restrict dst, const " << T_
          << "* __restrict src, long n) {\n"
          << "  long j = 0;\n"
          << "  for (; j < n && ((unsigned long)(dst + j) & 63); ++j) dst[j] = src[j];\n"
          << "  for (; j + " << lanes << " <= n; j += " << lanes << ") {\n"
          << "    " << V << " v;\n"
          << "    __builtin_memcpy(&v, src + j, sizeof v);\n"
          << "#if defined(__clang__)\n"
          << "    __builtin_nontemporal_store(v, (" << V << "*)(dst + j));\n"
          << "#else\n"
          << "    " << nt << "(dst + j, v);\n"
          << "#endif\n"
          << "  }\n"
          << "  for (; j < n; ++j) dst[j] = src[j];\n"
          << "}\n\n";
    }
    // The entry point (emit_cpp.h): a work item is a block of `rb` consecutive rows (along dim
    // nd - 2) by a chunk of tile / rb columns. Inputs that are contiguous along the row are read
    // in place unless an output is the same buffer (an in-place state update: the body's
    // restrict pointers must not alias, so such an input is staged first); the rest are staged,
    // a transposed one (stride 1 across rows) block-wise, so each cache line is read once.
    os_ << "extern \"C\" void " << symbol
        << "(long wb, long we, const long* shape, long nd, const long* strides, const void* const* in, "
           "void* const* out, long rb) {\n"
        << "  const long tile = " << tile << ";\n"
        << "  const long inner = shape[nd - 1], mid = nd >= 2 ? shape[nd - 2] : 1;\n"
        << "  const long cw = tile / rb;\n"
        << "  const long chunks = (inner + cw - 1) / cw, blocks = (mid + rb - 1) / rb;\n";
    for (size_t k = 0; k < ni; ++k) {
      os_ << "  " << T_ << " s" << k << "[" << tile << "];\n";
      if (p_.inputs[k] == DType::Bool) continue;  // always staged
      os_ << "  const bool a" << k << " = false";
      for (size_t j = 0; j < no; ++j) os_ << " || in[" << k << "] == (const void*)out[" << j << "]";
      os_ << ";\n";
    }
    if (vec_bytes_ > 0) {
      // Stream when the outputs are far larger than the caches and rows hold several lines.
      os_ << "  long total = 1;\n  for (long d = 0; d < nd; ++d) total *= shape[d];\n"
          << "  const bool nt = total * " << no * (f32_ ? 4 : 8) << " >= " << kStreamingStoreBytes
          << " && inner * " << (f32_ ? 4 : 8) << " >= 256;\n";
    }
    if (vec_bytes_ > 0)
      for (size_t j = 0; j < no; ++j)
        os_ << "  " << T_ << " t" << j << "[" << tile << "] __attribute__((aligned(" << vec_bytes_ << ")));\n";
    os_ << "  for (long w = wb; w < we; ++w) {\n"
        << "    const long q = w / chunks, j0 = (w % chunks) * cw;\n"
        << "    const long r0 = (q % blocks) * rb, outer = q / blocks;\n"
        << "    const long n = inner - j0 < cw ? inner - j0 : cw;\n"
        << "    const long nr = mid - r0 < rb ? mid - r0 : rb;\n"
        << "    const long row0 = outer * mid + r0;\n";
    for (size_t k = 0; k < ni; ++k) os_ << "    long off" << k << " = 0;\n";
    os_ << "    for (long d = nd - 3, r = outer; d >= 0; --d) {\n"
        << "      const long idx = r % shape[d];\n"
        << "      r /= shape[d];\n";
    for (size_t k = 0; k < ni; ++k) os_ << "      off" << k << " += idx * strides[" << k << " * nd + d];\n";
    os_ << "    }\n";
    for (size_t k = 0; k < ni; ++k) {
      const std::string K = std::to_string(k);
      const bool is_bool = p_.inputs[k] == DType::Bool;
      const std::string src_t = is_bool ? "unsigned char" : T_;
      os_ << "    const " << T_ << "* p" << K << " = s" << K << ";\n"
          << "    long ps" << K << " = cw;\n"
          << "    {\n"
          << "      const long st = strides[" << K << " * nd + nd - 1], rs = nd >= 2 ? strides[" << K << " * nd + nd - 2] : 0;\n"
          << "      const " << src_t << "* b = (const " << src_t << "*)in[" << K << "] + off" << K << " + r0 * rs + j0 * st;\n";
      if (!is_bool)
        os_ << "      if (st == 1 && !a" << K << ") {\n        p" << K << " = b;\n        ps" << K << " = rs;\n      } else\n";
      os_ << "      spore_stage" << (is_bool ? "_bool" : "") << S_ << "(s" << K << ", b, n, nr, st, rs, cw);\n"
          << "    }\n";
    }
    auto out_at = [&](size_t j) {
      return std::string("(")
          .append(p_.outputs[j] == DType::Bool ? "unsigned char" : T_)
          .append("*)out[")
          .append(std::to_string(j))
          .append("] + (row0 + r) * inner + j0");
    };
    auto call = [&](bool staged) {
      os_ << symbol << "_body(n";
      for (size_t k = 0; k < ni; ++k) os_ << ", p" << k << " + r * ps" << k;
      for (size_t j = 0; j < no; ++j) {
        os_ << ", ";
        if (staged) os_ << "t" << j;
        else os_ << out_at(j);
      }
      os_ << ")";
    };
    os_ << "    for (long r = 0; r < nr; ++r) {\n      ";
    if (vec_bytes_ > 0) {
      os_ << "if (nt) {\n        ";
      call(true);
      os_ << ";\n";
      for (size_t j = 0; j < no; ++j) os_ << "        " << symbol << "_stream(" << out_at(j) << ", t" << j << ", n);\n";
      os_ << "        continue;\n      }\n      ";
    }
    call(false);
    os_ << ";\n    }\n  }\n";
    // Streaming stores are weakly ordered: fence them before the caller's threads read.
    if (vec_bytes_ > 0) os_ << "  if (nt) __builtin_ia32_sfence();\n";
    os_ << "}\n\n";
  }


  // A row program (loop_program.h): work items are rows. The driver (compiled_kernel.cc) passes
  // the iteration shape as its leading dims plus one merged row dim of `rl` elements, and each
  // input's strides over them. Per row: offsets from the row index, then the segments in order;
  // row registers are scalars of the whole row, an element segment a loop over chunks of the
  // row whose reduced operands go to a chunk buffer, folded after the loop (sixteen partial
  // sums, as the interpreter folds).
  void write_rows(const std::string& symbol, int64_t tile) {
    SPORE_ASSERT(kRowFoldChunk % tile == 0, "emit_cpp: a row kernel's chunk ", tile, " must divide the fold chunk");
    const size_t ni = p_.inputs.size();
    std::vector<char> row_reg(static_cast<size_t>(p_.num_registers), 0);
    for (const Segment& sg : p_.segments)
      if (sg.per_row)
        for (int32_t at = sg.begin; at < sg.end; ++at)
          if (p_.code[static_cast<size_t>(at)].dst >= 0) row_reg[static_cast<size_t>(p_.code[static_cast<size_t>(at)].dst)] = 1;
    os_ << "extern \"C\" void " << symbol
        << "(long wb, long we, const long* shape, long nd, const long* strides, const void* const* in, "
           "void* const* out, long rl) {\n"
        << "  const long tile = " << tile << ";\n";
    for (size_t k = 0; k < ni; ++k) os_ << "  " << T_ << " s" << k << "[" << tile << "];\n";
    // Each reduction's open chunk of the row, folded by the unfused reductions' loops (the
    // driver passes them after the inputs: emit_cpp.h).
    os_ << "  const spore_folds" << S_ << "* F = (const spore_folds" << S_ << "*)in[" << ni << "];\n";
    for (int32_t a = 0; a < p_.num_accumulators; ++a) os_ << "  " << T_ << " red" << a << "[" << kRowFoldChunk << "];\n";
    for (int32_t x = 0; x < p_.num_registers; ++x)
      if (row_reg[static_cast<size_t>(x)]) os_ << "  " << T_ << " " << r(x) << " = " << c(0) << ";\n";
    for (int32_t a = 0; a < p_.num_accumulators; ++a) os_ << "  " << T_ << " acc" << a << ";\n  int any" << a << ";\n";
    os_ << "  for (long w = wb; w < we; ++w) {\n";
    for (size_t k = 0; k < ni; ++k) os_ << "    long off" << k << " = 0;\n";
    os_ << "    for (long d = nd - 2, q = w; d >= 0; --d) {\n"
        << "      const long idx = q % shape[d];\n"
        << "      q /= shape[d];\n";
    for (size_t k = 0; k < ni; ++k) os_ << "      off" << k << " += idx * strides[" << k << " * nd + d];\n";
    os_ << "    }\n";
    for (int32_t a = 0; a < p_.num_accumulators; ++a) {
      const ReduceCode rc = p_.accumulators[static_cast<size_t>(a)];
      os_ << "    acc" << a << " = " << (rc == ReduceCode::max ? c(-INFINITY) : rc == ReduceCode::min ? c(INFINITY) : c(0))
          << ";\n    any" << a << " = 0;\n";
    }
    auto load = [&](const Instr& i, const std::string& at) {
      const std::string K = std::to_string(i.slot);
      if (p_.inputs[static_cast<size_t>(i.slot)] == DType::Bool)
        return r(i.dst) + " = ((const unsigned char*)in[" + K + "])[off" + K + at + "] != 0 ? " + c(1) + " : " + c(0) + ";";
      return r(i.dst) + " = ((const " + T_ + "*)in[" + K + "])[off" + K + at + "];";
    };
    auto store = [&](const Instr& i, const std::string& at) {
      const std::string J = std::to_string(i.slot);
      if (p_.outputs[static_cast<size_t>(i.slot)] == DType::Bool)
        return "((unsigned char*)out[" + J + "])[" + at + "] = " + r(i.a) + " != " + c(0) + " ? 1 : 0;";
      return "((" + T_ + "*)out[" + J + "])[" + at + "] = " + r(i.a) + ";";
    };
    for (const Segment& sg : p_.segments) {
      if (sg.per_row) {
        for (int32_t at = sg.begin; at < sg.end; ++at) {
          const Instr& i = p_.code[static_cast<size_t>(at)];
          os_ << "    ";
          if (i.kind == InstrKind::Load) os_ << load(i, "");
          else if (i.kind == InstrKind::Result) os_ << r(i.dst) << " = acc" << i.slot << ";";
          else if (i.kind == InstrKind::Store) os_ << store(i, "w");
          else os_ << instr(i);
          os_ << "\n";
        }
        continue;
      }
      os_ << "    for (long c0 = 0; c0 < rl; c0 += tile) {\n"
          << "      const long n = rl - c0 < tile ? rl - c0 : tile;\n";
      std::vector<char> loaded(ni, 0), local(static_cast<size_t>(p_.num_registers), 0);
      for (int32_t at = sg.begin; at < sg.end; ++at) {
        const Instr& i = p_.code[static_cast<size_t>(at)];
        if (i.dst >= 0) local[static_cast<size_t>(i.dst)] = 1;
        if (i.kind != InstrKind::Load || loaded[static_cast<size_t>(i.slot)]) continue;
        loaded[static_cast<size_t>(i.slot)] = 1;
        const std::string K = std::to_string(i.slot);
        const bool is_bool = p_.inputs[static_cast<size_t>(i.slot)] == DType::Bool;
        const std::string src_t = is_bool ? "unsigned char" : T_;
        os_ << "      const " << T_ << "* p" << K << " = s" << K << ";\n"
            << "      {\n"
            << "        const long st = strides[" << K << " * nd + nd - 1];\n"
            << "        const " << src_t << "* b = (const " << src_t << "*)in[" << K << "] + off" << K << " + c0 * st;\n";
        if (!is_bool) os_ << "        if (st == 1) p" << K << " = b; else\n";
        os_ << "        spore_stage" << (is_bool ? "_bool" : "") << S_ << "(s" << K << ", b, n, 1, st, 0, tile);\n"
            << "      }\n";
      }
      os_ << "      for (long j = 0; j < n; ++j) {\n";
      for (int32_t x = 0; x < p_.num_registers; ++x)
        if (local[static_cast<size_t>(x)]) os_ << "        " << T_ << " " << r(x) << ";\n";
      for (int32_t at = sg.begin; at < sg.end; ++at) {
        const Instr& i = p_.code[static_cast<size_t>(at)];
        os_ << "        ";
        switch (i.kind) {
          case InstrKind::Load: os_ << r(i.dst) << " = p" << i.slot << "[j];"; break;
          case InstrKind::Splat: os_ << r(i.dst) << " = " << r(i.a) << ";"; break;
          case InstrKind::Reduce: os_ << "red" << i.slot << "[c0 % " << kRowFoldChunk << " + j] = " << r(i.a) << ";"; break;
          case InstrKind::Store: os_ << store(i, "w * rl + c0 + j"); break;
          default: os_ << instr(i); break;
        }
        os_ << "\n";
      }
      os_ << "      }\n";
      // A full chunk, or the row's end: fold the chunk (its reduction by the unfused loop, then
      // combined with the chunks before it, as prims/reduce_engine.h combines them).
      for (int32_t at = sg.begin; at < sg.end; ++at) {
        const Instr& i = p_.code[static_cast<size_t>(at)];
        if (i.kind != InstrKind::Reduce) continue;
        const auto rc = static_cast<ReduceCode>(i.code);
        const std::string A = std::to_string(i.slot), m = "(c0 % " + std::to_string(kRowFoldChunk) + " + n)";
        const char* f = rc == ReduceCode::max ? "max" : rc == ReduceCode::min ? "min" : "sum";
        os_ << "      if (" << m << " == " << kRowFoldChunk << " || c0 + n == rl) {\n"
            << "        " << T_ << " b = F->" << f << "(red" << A << ", " << m << ");\n";
        if (rc == ReduceCode::max || rc == ReduceCode::min) {
          const char* cmp = rc == ReduceCode::max ? ">" : "<";
          os_ << "        acc" << A << " = !any" << A << " ? b : ((b " << cmp << " acc" << A << " || b != b) && acc" << A
              << " == acc" << A << " ? b : acc" << A << ");\n";
        } else {
          os_ << "        b = " << c(0) << " + b;\n"
              << "        acc" << A << " = any" << A << " ? acc" << A << " + b : b;\n";
        }
        os_ << "        any" << A << " = 1;\n      }\n";
      }
      os_ << "    }\n";
      for (int32_t at = sg.begin; at < sg.end; ++at) {
        const Instr& i = p_.code[static_cast<size_t>(at)];
        if (i.kind == InstrKind::Reduce && static_cast<ReduceCode>(i.code) == ReduceCode::mean)
          os_ << "    acc" << i.slot << " /= (" << T_ << ")rl;\n";
      }
    }
    os_ << "  }\n}\n\n";
  }

 private:
  // (Appending rather than "r" + to_string: g++ 12 -O3 warns a false -Wrestrict on the latter.)
  std::string r(int32_t x) const { return std::string("r").append(std::to_string(x)); }
  std::string c(double v) const { return lit(v, f32_); }
  std::string b(const std::string& cond) const { return "(" + cond + " ? " + c(1) + " : " + c(0) + ")"; }
  std::string vmax(const std::string& a, const std::string& bb) const { return "(" + a + " < " + bb + " ? " + bb + " : " + a + ")"; }
  std::string vmin(const std::string& a, const std::string& bb) const { return "(" + bb + " < " + a + " ? " + bb + " : " + a + ")"; }
  std::string fabs(const std::string& x) const { return std::string(f32_ ? "__builtin_fabsf(" : "__builtin_fabs(") + x + ")"; }
  std::string call(const char* fn, const std::string& x) const { return std::string("__builtin_") + fn + (f32_ ? "f(" : "(") + x + ")"; }
  std::string helper(const char* fn, const std::string& x) const { return std::string("spore_") + fn + S_ + "(" + x + ")"; }

  // Each expression mirrors its row in backends/cpu/unary_math.h / binary_math.h and the tile
  // ops (tile_ops.isa.cc), evaluation order included.
  std::string unary(const Instr& i) const {
    const std::string x = r(i.a);
    switch (static_cast<UnaryOp>(i.code)) {
      case UnaryOp::neg: return neg_is_sub_ ? c(0) + " - " + x : "-" + x;
      case UnaryOp::abs: return fabs(x);
      case UnaryOp::sign: return "(" + x + " > " + c(0) + " ? " + c(1) + " : (" + x + " < " + c(0) + " ? " + c(-1) + " : " + c(0) + "))";
      case UnaryOp::exp: return helper("exp", x);
      case UnaryOp::sqrt: return call("sqrt", x);
      case UnaryOp::rsqrt: return c(1) + " / " + call("sqrt", x);
      case UnaryOp::reciprocal: return c(1) + " / " + x;
      case UnaryOp::square: return x + " * " + x;
      case UnaryOp::sigmoid: return c(1) + " / (" + c(1) + " + " + helper("exp", "-" + x) + ")";
      case UnaryOp::relu: return "(" + x + " > " + c(0) + " ? " + x + " : (" + x + " != " + x + " ? " + x + " : " + c(0) + "))";
      case UnaryOp::relu6: return "(" + x + " != " + x + " ? " + x + " : " + vmin(vmax(x, c(0)), c(6)) + ")";
      case UnaryOp::leaky_relu: return "(" + x + " > " + c(0) + " ? " + x + " : " + x + " * " + c(i.pa) + ")";
      case UnaryOp::gelu:
        return c(0.5) + " * " + x + " * (" + c(1) + " + " + helper("erf", x + " * " + c(0.70710678118654752440)) + ")";
      case UnaryOp::silu: return x + " / (" + c(1) + " + " + helper("exp", "-" + x) + ")";
      case UnaryOp::hardswish: return x + " * " + vmin(vmax(x + " + " + c(3), c(0)), c(6)) + " / " + c(6);
      case UnaryOp::hardsigmoid: return vmin(vmax(x + " + " + c(3), c(0)), c(6)) + " / " + c(6);
      case UnaryOp::erf: return helper("erf", x);
      case UnaryOp::floor: return call("floor", x);
      case UnaryOp::ceil: return call("ceil", x);
      case UnaryOp::round: return call("rint", x);  // nearbyint's value in the default rounding mode
      case UnaryOp::trunc: return call("trunc", x);
      default: SPORE_ASSERT(false, "emit_cpp: unary op ", int(i.code), " has no port (emit_problem should have said)");
    }
    return {};
  }

  std::string binary(const Instr& i) const {
    const std::string a = r(i.a), bb = r(i.b);
    switch (static_cast<BinaryOp>(i.code)) {
      case BinaryOp::add: return a + " + " + bb;
      case BinaryOp::sub: return a + " - " + bb;
      case BinaryOp::mul: return a + " * " + bb;
      case BinaryOp::div: return a + " / " + bb;
      case BinaryOp::maximum: return "(" + a + " != " + a + " ? " + a + " : (" + bb + " != " + bb + " ? " + bb + " : " + vmax(a, bb) + "))";
      case BinaryOp::minimum: return "(" + a + " != " + a + " ? " + a + " : (" + bb + " != " + bb + " ? " + bb + " : " + vmin(a, bb) + "))";
      default: SPORE_ASSERT(false, "emit_cpp: binary op ", int(i.code), " has no port (emit_problem should have said)");
    }
    return {};
  }

  std::string instr(const Instr& i) const {
    const std::string d = i.dst >= 0 ? r(i.dst) + " = " : "";
    const std::string a = r(i.a), bb = r(i.b), cc = r(i.c);
    const std::string nz_a = "!(" + a + " == " + c(0) + ")", nz_b = "!(" + bb + " == " + c(0) + ")";
    switch (i.kind) {
      case InstrKind::Load: return d + "i" + std::to_string(i.slot) + "[j];";
      case InstrKind::Const: return d + c(i.imm) + ";";
      case InstrKind::Unary: return d + unary(i) + ";";
      case InstrKind::Binary: return d + binary(i) + ";";
      case InstrKind::Compare: {
        static const char* const kOps[] = {"==", "!=", "<", "<=", ">", ">="};
        if (static_cast<CompareCode>(i.code) == CompareCode::ne) return d + b("!(" + a + " == " + bb + ")") + ";";
        return d + b(a + " " + kOps[i.code] + " " + bb) + ";";
      }
      case InstrKind::Logical:
        switch (static_cast<LogicalCode>(i.code)) {
          case LogicalCode::land: return d + b("(" + nz_a + " && " + nz_b + ")") + ";";
          case LogicalCode::lor: return d + b("(" + nz_a + " || " + nz_b + ")") + ";";
          default: return d + b("(" + nz_a + " != " + nz_b + ")") + ";";
        }
      case InstrKind::Predicate:
        switch (static_cast<PredicateCode>(i.code)) {
          case PredicateCode::isnan: return d + b(a + " != " + a) + ";";
          case PredicateCode::isinf: return d + b(fabs(a) + " == " + c(INFINITY)) + ";";
          case PredicateCode::isfinite: return d + b(fabs(a) + " < " + c(INFINITY)) + ";";
          case PredicateCode::logical_not: return d + b(a + " == " + c(0)) + ";";
          default: return d + b(nz_a) + ";";
        }
      case InstrKind::Where: return d + "(" + nz_a + " ? " + bb + " : " + cc + ");";
      case InstrKind::Clamp:
        // m = max(x, lo) keeping NaN x; min(m, hi); NaN when a bound is NaN.
        return "{ " + T_ + " m = " + a + " < " + bb + " ? " + bb + " : " + a + "; " + T_ + " q = " + cc + " < m ? " + cc +
               " : m; " + d + "(" + bb + " != " + bb + " || " + cc + " != " + cc + ") ? " + c(NAN) + " : q; }";
      case InstrKind::Lerp:
        return "{ " + T_ + " dd = " + bb + " - " + a + "; " + T_ + " lo = " + a + " + " + cc + " * dd; " + T_ + " hi = " +
               bb + " - dd * (" + c(1) + " - " + cc + "); " + d + fabs(cc) + " < " + c(0.5) + " ? lo : hi; }";
      case InstrKind::Store:
        if (p_.outputs[static_cast<size_t>(i.slot)] == DType::Bool)
          return "o" + std::to_string(i.slot) + "[j] = " + a + " != " + c(0) + " ? 1 : 0;";
        return "o" + std::to_string(i.slot) + "[j] = " + a + ";";
      case InstrKind::Reduce:
      case InstrKind::Result:
      case InstrKind::Splat:
        SPORE_ASSERT(false, "emit_cpp: row program instructions are written by write_rows");
    }
    return {};
  }

  const LoopProgram& p_;
  std::ostringstream& os_;
  bool f32_;
  bool neg_is_sub_ = false;
  long vec_bytes_ = 0;  // streaming-store vector width; 0: no streaming body
  std::string T_, S_;
};

}  // namespace

bool emits(const Instr& i) {
  if (i.kind == InstrKind::Unary) return unary_helper(static_cast<UnaryOp>(i.code)) != "?";
  if (i.kind == InstrKind::Binary) {
    const auto op = static_cast<BinaryOp>(i.code);
    return op != BinaryOp::pow && op != BinaryOp::atan2;
  }
  return true;
}

std::string emit_problem(const LoopProgram& p) {
  if (p.dtype != DType::Float32 && p.dtype != DType::Float64) return "compute type is not float32/float64";
  for (const Instr& i : p.code)
    if (!emits(i))
      return std::string(i.kind == InstrKind::Unary ? "unary" : "binary") + " op #" + std::to_string(i.code) + " (node " +
             std::to_string(i.node) + ") has no emitted port";
  return {};
}

std::string emit_unit(std::span<const KernelDecl> kernels) {
  std::set<std::string> helpers;
  for (const KernelDecl& k : kernels) {
    SPORE_ASSERT(emit_problem(*k.program).empty(), "emit_unit: ", emit_problem(*k.program));
    for (const Instr& i : k.program->code)
      if (i.kind == InstrKind::Unary) {
        const std::string h = unary_helper(static_cast<UnaryOp>(i.code));
        if (!h.empty()) helpers.insert(h + (k.program->dtype == DType::Float32 ? "_f32" : "_f64"));
      }
  }
  std::ostringstream os;
  os << "// Generated by spore's kernel emitter (generator version " << kGeneratorVersion
     << "): no include directives, plain loops over restrict pointers for the host compiler to vectorize.\n\n";
  os << emit_math_helpers(helpers);
  std::set<std::pair<bool, bool>> stages;  // (float32, bool operand)
  for (const KernelDecl& k : kernels)
    for (DType t : k.program->inputs) stages.insert({k.program->dtype == DType::Float32, t == DType::Bool});
  for (auto [f32, from_bool] : stages) os << stage_helper(f32, from_bool);
  std::set<bool> folds;  // float32
  for (const KernelDecl& k : kernels)
    if (k.program->row_dims > 0) folds.insert(k.program->dtype == DType::Float32);
  for (bool f32 : folds) os << fold_types(f32);
  for (const KernelDecl& k : kernels) {
    KernelWriter w(*k.program, os);
    if (k.program->row_dims > 0) w.write_rows(k.symbol, k.tile);
    else w.write(k.symbol, k.tile);
  }
  return os.str();
}

}  // namespace spore::codegen
