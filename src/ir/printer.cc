// SPDX-License-Identifier: Apache-2.0
#include "ir/printer.h"

#include <sstream>

#include "ir/error.h"

namespace spore::ir {
namespace {

class Printer {
 public:
  explicit Printer(std::ostringstream& os) : os_(os) {}

  void graph(const Graph& g, int indent) {
    // Value numbers: parameters first, then node outputs in order, matching what the parser
    // assigns, so the text needs no explicit index table.
    std::vector<int> first_out;
    int next = static_cast<int>(g.params().size());
    for (const auto& n : g.nodes()) {
      first_out.push_back(next);
      next += static_cast<int>(n->outputs().size());
    }
    auto name = [&](ValueRef v) -> std::string {
      if (!g.defines(v)) return "%undefined";  // only unverified graphs, printed for debugging
      return cat("%", v.node == ValueRef::kParam ? v.index : first_out[v.node] + v.index);
    };
    pad(indent);
    os_ << "graph @" << g.name() << "(";
    for (size_t i = 0; i < g.params().size(); ++i)
      os_ << (i ? ", " : "") << "%" << i << ": " << role_name(g.params()[i].role) << " "
          << type_str(g.params()[i].type);
    os_ << ") {\n";
    for (size_t i = 0; i < g.nodes().size(); ++i) {
      const Node& n = *g.nodes()[i];
      pad(indent + 2);
      for (size_t k = 0; k < n.outputs().size(); ++k)
        os_ << (k ? ", " : "") << name({static_cast<int32_t>(i), static_cast<int32_t>(k)});
      os_ << " = " << n.op();
      if (n.attrs()) os_ << "{" << n.info().print_attrs(n.attrs()) << "}";
      os_ << "(";
      for (size_t k = 0; k < n.inputs().size(); ++k) os_ << (k ? ", " : "") << name(n.inputs()[k]);
      os_ << ") : ";
      for (size_t k = 0; k < n.outputs().size(); ++k) os_ << (k ? ", " : "") << type_str(n.outputs()[k]);
      if (!n.scope().empty()) os_ << " scope \"" << n.scope() << "\"";
      if (!n.subgraphs().empty()) {
        os_ << " {\n";
        for (const auto& sub : n.subgraphs()) graph(*sub, indent + 4);
        pad(indent + 2);
        os_ << "}";
      }
      os_ << "\n";
    }
    pad(indent + 2);
    os_ << "return";
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      const Output& o = g.outputs()[i];
      os_ << (i ? ", " : " ") << name(o.value);
      if (o.updates) os_ << " updates %" << *o.updates;
    }
    os_ << "\n";
    pad(indent);
    os_ << "}\n";
  }

 private:
  void pad(int n) { os_ << std::string(static_cast<size_t>(n), ' '); }
  std::ostringstream& os_;
};

}  // namespace

std::string print_graph(const Graph& g) {
  std::ostringstream os;
  Printer(os).graph(g, 0);
  return os.str();
}

}  // namespace spore::ir
