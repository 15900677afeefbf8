#include "model/ir/print.hpp"

#include <cstdio>
#include <sstream>

namespace hw::model {

static std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

static void infix(const Model& m, ExprId id, std::ostringstream& out) {
  const Node& n = m.pool.node(id);
  const OpInfo& info = op_info(n.op);
  switch (n.op) {
    case Op::constant: out << number(n.value); return;
    case Op::variable: out << m.variable_name(n.var_kind, n.index); return;
    case Op::neg: out << "(-"; infix(m, n.args[0], out); out << ")"; return;
    case Op::logical_not: out << "(!"; infix(m, n.args[0], out); out << ")"; return;
    case Op::select:
      out << "select(";
      infix(m, n.args[0], out); out << ", ";
      infix(m, n.args[1], out); out << ", ";
      infix(m, n.args[2], out); out << ")";
      return;
    case Op::piecewise:
    case Op::pow: case Op::min: case Op::max: case Op::rem:
      out << info.name << "(";
      for (std::size_t i = 0; i < n.args.size(); ++i) {
        if (i) out << ", ";
        infix(m, n.args[i], out);
      }
      out << ")";
      return;
    default: break;
  }
  if (n.args.size() == 1) {
    out << info.name << "(";
    infix(m, n.args[0], out);
    out << ")";
    return;
  }
  const char* sym = n.op == Op::logical_xor ? "xor" : info.spelling.data();
  out << "(";
  infix(m, n.args[0], out);
  out << " " << sym << " ";
  infix(m, n.args[1], out);
  out << ")";
}

std::string to_infix(const Model& m, ExprId id) {
  std::ostringstream out;
  if (id == kNoExpr) return "<none>";
  infix(m, id, out);
  return out.str();
}

std::string dump(const Model& m) {
  std::ostringstream out;
  out << "model " << m.name << "  (time: " << m.time.name << ")\n";
  for (const auto& p : m.parameters) out << "  param " << p.name << " = " << number(p.value) << "\n";
  for (std::size_t i = 0; i < m.states.size(); ++i) {
    out << "  state " << m.states[i].name << " = " << number(m.states[i].initial);
    if (i < m.analysis.size() && m.analysis[i].is_gate) out << "  [gate]";
    out << "\n";
  }
  for (const auto& a : m.algebraics) out << "  " << a.name << " = " << to_infix(m, a.expr) << "\n";
  for (std::size_t i = 0; i < m.states.size() && i < m.derivatives.size(); ++i)
    out << "  d/dt " << m.states[i].name << " = " << to_infix(m, m.derivatives[i]) << "\n";
  return out.str();
}

}  // namespace hw::model
