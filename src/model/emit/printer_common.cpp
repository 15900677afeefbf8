#include "model/emit/printer_common.hpp"

#include "model/passes/linear_blocks.hpp"
#include "model/passes/tabulate.hpp"
#include "model/passes/util.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/error.hpp"
#include "model/emit/identifiers.hpp"
#include "model/passes/linear_blocks.hpp"

namespace hw::model {

TargetProfile cpp_profile(bool fast_intrinsics) {
  TargetProfile p;
  p.branch_free = true;
  p.fast_intrinsics = fast_intrinsics;
  p.pow_param = fast_intrinsics ? "hw_fast_pow_param<kIntPow, Real>" : "pow_param<kIntPow>";
  return p;
}

TargetProfile cuda_profile(bool use_float, bool fast_intrinsics, std::string powi_name) {
  TargetProfile p;
  p.real = use_float ? "float" : "double";
  p.cuda = true;
  p.use_float = use_float;
  p.fast_intrinsics = use_float && fast_intrinsics;
  p.powi = std::move(powi_name);
  return p;
}

std::string TargetProfile::literal(double v) const {
  char buf[64];
  if (std::isnan(v)) {
    if (!cuda) return "std::numeric_limits<" + real + ">::quiet_NaN()";
    return use_float ? "__int_as_float(0x7fc00000)" : "__longlong_as_double(0x7ff8000000000000LL)";
  }
  if (std::isinf(v)) {
    std::string inf = !cuda ? "std::numeric_limits<" + real + ">::infinity()"
                      : use_float ? "__int_as_float(0x7f800000)"
                                  : "__longlong_as_double(0x7ff0000000000000LL)";
    return v < 0 ? "(-" + inf + ")" : inf;
  }
  std::string text;
  if (!cuda) {
    // Real(double literal): the compiler rounds the exact double to Real once.
    if (v == std::trunc(v) && std::fabs(v) < 1e15 && !(v == 0 && std::signbit(v))) {
      std::snprintf(buf, sizeof buf, "%.0f", v);
    } else {
      std::snprintf(buf, sizeof buf, "%.17g", v);
    }
    text = real + "(" + buf + ")";
  } else {
    // Print the value already rounded to the target type, with enough digits to round-trip.
    if (use_float)
      std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(static_cast<float>(v)));
    else
      std::snprintf(buf, sizeof buf, "%.17g", v);
    text = buf;
    if (text.find_first_of(".en") == std::string::npos) text += ".0";
    if (use_float) text += "f";
  }
  if (v < 0 || (v == 0 && std::signbit(v))) text = "(" + text + ")";
  return text;
}

TargetProfile TargetProfile::widened() const {
  TargetProfile w = *this;
  w.real = "double";
  w.use_float = false;
  w.fast_intrinsics = false;
  if (!cuda && fast_intrinsics) w.pow_param = cpp_profile(false).pow_param;  // not the float emulation
  return w;
}

std::string TargetProfile::function(Op op) const {
  std::string name(op_info(op).spelling);
  // sin and cos keep their maths: __sinf's error grows with |x| beyond what a bound on a
  // model's range can state, and the C++ printer could not reproduce it.
  const bool fast = fast_intrinsics && (op == Op::exp || op == Op::log || op == Op::pow || op == Op::log10);
  // C++: the kernel's Real named, so that an operand computed in double converts to it as
  // the CUDA intrinsic's float parameter converts it.
  if (!cuda) return fast ? "hw_fast_" + name + "<" + real + ">" : "std::" + name;
  if (fast) return "__" + name + "f";
  return use_float ? name + "f" : name;
}

std::string TargetProfile::fast_division() const {
  if (!fast_intrinsics) return "";
  return cuda ? "__fdividef" : "hw_fast_div<" + real + ">";
}

std::optional<int> small_integer_exponent(const ExprPool& pool, ExprId e) {
  if (!pool.is_constant(e)) return std::nullopt;
  const double v = pool.node(e).value;
  if (v != std::trunc(v) || std::fabs(v) > 64) return std::nullopt;
  return static_cast<int>(v);
}

bool exact_reciprocal(double v) {
  if (v == 0 || !std::isfinite(v)) return false;
  int e = 0;
  const double mant = std::frexp(std::fabs(v), &e);
  return mant == 0.5 && e > -120 && e < 120;
}

namespace {

// Precedence of a printed expression: higher binds tighter.
enum Prec { kAdditive = 1, kMultiplicative = 2, kUnary = 3, kAtom = 4 };

struct Printed {
  std::string text;
  int prec = kAtom;
};

class StraightLine {
 public:
  StraightLine(const Model& m, const TargetProfile& prof, const VarNamer& names)
      : m_(m), pool_(m.pool), narrow_(prof), wide_(prof.widened()), names_(names) {
    if (prof.tables)
      for (const TabulatedFunction& f : prof.tables->functions) tabulated_[f.expr] = &f;
  }

  std::string print(const std::vector<Assignment>& stmts, std::string_view indent) {
    count_uses(stmts);
    std::ostringstream out;
    for (const Assignment& s : stmts) {
      // A wide statement has its own temporaries: one shared with a narrow statement
      // would bring its float rounding into the double computation.
      ctx_ = s.wide ? 1 : 0;
      if (s.lhs.empty()) {  // raw lines (fused_step.cpp's block solves), indented already
        out << s.rhs_text;
        continue;
      }
      if (s.expr != kNoExpr) emit_temporaries(s.expr, indent, out);
      out << indent << s.lhs << " = ";
      out << (s.expr == kNoExpr ? s.rhs_text : value(s.expr).text) << ";";
      if (!s.comment.empty()) out << "  // " << s.comment;
      out << "\n";
    }
    return out.str();
  }

 private:
  bool is_leaf(ExprId id) const {
    const Op op = pool_.op(id);
    return op == Op::constant || op == Op::variable;
  }

  // Parent edges per node over every statement; nodes reached twice are not re-entered.
  void count_uses(const std::vector<Assignment>& stmts) {
    std::unordered_set<ExprId> seen;
    std::vector<ExprId> stack;
    for (const Assignment& s : stmts) {
      if (s.expr == kNoExpr) continue;
      ++uses_[s.expr];
      if (seen.insert(s.expr).second) stack.push_back(s.expr);
      while (!stack.empty()) {
        const ExprId id = stack.back();
        stack.pop_back();
        const Op op = pool_.op(id);
        if (op == Op::piecewise)
          throw Error("code generation: piecewise not lowered to select (run the pass pipeline)");
        if (narrow_.branch_free && op == Op::select) {
          arms_.insert(pool_.args(id)[1]);
          arms_.insert(pool_.args(id)[2]);
        }
        for (ExprId a : pool_.args(id)) {
          ++uses_[a];
          if (seen.insert(a).second) stack.push_back(a);
        }
      }
    }
  }

  bool wants_temporary(ExprId id) const {
    if (is_leaf(id) && !lookup(id)) return false;
    if (arms_.count(id) && !is_boolean(pool_.op(id))) return true;
    auto it = uses_.find(id);
    return it != uses_.end() && it->second > 1;
  }

  // The table lookup replacing node id here, or nullptr (never in a wide statement).
  const TabulatedFunction* lookup(ExprId id) const {
    if (ctx_ != 0 || tabulated_.empty()) return nullptr;
    auto it = tabulated_.find(id);
    return it == tabulated_.end() ? nullptr : it->second;
  }

  // The index and weight of a table group, once per function, before its first lookup:
  // V outside the table's range gives a NaN weight, so every lookup is NaN there.
  void emit_table_index(int g, std::string_view indent, std::ostringstream& out) {
    if (!indexed_.insert(g).second) return;
    const Tabulation& t = *narrow_.tables;
    const TableGroup& grp = t.groups[g];
    const TargetProfile& p = narrow_;
    const std::string G = std::to_string(g), x = "lut_x" + G, i = "lut_i" + G, w = "lut_w" + G;
    const std::string last = p.literal(grp.rows - 1), below_last = p.literal(grp.rows - 2), zero = p.literal(0);
    out << indent << "const " << p.real << " " << x << " = (" << names_(VarKind::state, t.voltage) << " - "
        << p.literal(grp.lo) << ") * " << p.literal(1.0 / grp.step) << ";\n";
    if (p.cuda) {
      out << indent << "const int " << i << " = static_cast<int>(" << (p.use_float ? "fminf(fmaxf(" : "fmin(fmax(")
          << x << ", " << zero << "), " << below_last << "));\n";
      out << indent << "const " << p.real << " " << w << " = (" << x << " >= " << zero << " && " << x << " <= " << last
          << ") ? " << x << " - static_cast<" << p.real << ">(" << i << ") : " << p.literal(std::nan("")) << ";\n";
    } else {
      // Written for GCC's vectoriser (the loop over cells): a clamp by selects, NaN to 0
      // (std::fmin/fmax on float stop it, and a float beyond int's range converts to
      // anything), and the NaN outside the range as 0·sqrt(x·(last − x)), negative there:
      // a select to NaN is control flow it does not if-convert.
      out << indent << "const int " << i << " = static_cast<int>(!(" << x << " >= " << zero << ") ? " << zero << " : ("
          << x << " > " << below_last << " ? " << below_last << " : " << x << "));\n";
      out << indent << "const " << p.real << " " << w << " = (" << x << " - static_cast<" << p.real << ">(" << i
          << ")) + " << zero << " * std::sqrt(" << x << " * (" << last << " - " << x << "));\n";
    }
    out << indent << "const int lut_b" << G << " = " << i << " * " << grp.functions.size() << ";\n";
  }

  std::string lookup_text(const TabulatedFunction& f) const {
    const Tabulation& t = *narrow_.tables;
    const std::string G = std::to_string(f.group);
    const std::size_t w = t.groups[f.group].functions.size();
    const auto load = [&](std::size_t k) {
      const std::string at = "lut_b" + G + " + " + std::to_string(k);
      return narrow_.cuda ? "__ldg(" + narrow_.table_prefix + "_lut" + G + " + " + at + ")"
                          : narrow_.real + "(" + narrow_.table_prefix + "_lut" + G + "<" + narrow_.real + ">[" + at + "])";
    };
    const std::string a = load(f.column), b = load(f.column + w);
    return "(" + a + " + lut_w" + G + " * (" + b + " - " + a + "))";
  }

  // Children first, so each temporary only refers to earlier ones.
  void emit_temporaries(ExprId id, std::string_view indent, std::ostringstream& out) {
    if (const TabulatedFunction* f = lookup(id)) {
      if (temp_name_[ctx_].count(id) || !visited_[ctx_].insert(id).second) return;
      emit_table_index(f->group, indent, out);
      if (!wants_temporary(id)) return;
      const std::string name = "s" + std::to_string(next_temp_++);
      out << indent << "const " << prof().real << " " << name << " = " << lookup_text(*f) << ";\n";
      temp_name_[ctx_][id] = name;
      return;
    }
    if (is_leaf(id) || temp_name_[ctx_].count(id) || visited_[ctx_].count(id)) return;
    visited_[ctx_].insert(id);
    for (ExprId a : pool_.args(id)) emit_temporaries(a, indent, out);
    if (!wants_temporary(id)) return;
    const bool boolean = is_boolean(pool_.op(id));
    const std::string text = boolean ? condition(id) : value(id).text;
    const std::string name = "s" + std::to_string(next_temp_++);
    out << indent << "const " << (boolean ? "bool" : prof().real) << " " << name << " = "
        << text << ";\n";
    temp_name_[ctx_][id] = name;
  }

  const TargetProfile& prof() const { return ctx_ ? wide_ : narrow_; }
  std::string lit(double v) const { return prof().literal(v); }

  // A variable as this statement reads it: in a wide statement every operand that the
  // kernel holds in Real is read as double, so the whole expression computes in double.
  std::string variable(VarKind kind, std::uint32_t index) const {
    const std::string name = names_(kind, index);
    if (!ctx_ || (kind == VarKind::algebraic && m_.algebraics[index].wide &&
                  !m_.algebraics[index].once_per_cell))
      return name;
    return "double(" + name + ")";
  }

  // The expression as a boolean (conditions of select, operands of logic).
  std::string condition(ExprId id) {
    if (auto it = temp_name_[ctx_].find(id); it != temp_name_[ctx_].end()) {
      if (is_boolean(pool_.op(id))) return it->second;
      return "(" + it->second + " != " + lit(0) + ")";
    }
    const Node& n = pool_.node(id);
    const auto bin = [&](const char* sym) {
      return "(" + value(n.args[0]).text + " " + sym + " " + value(n.args[1]).text + ")";
    };
    switch (n.op) {
      case Op::lt: return bin("<");
      case Op::le: return bin("<=");
      case Op::gt: return bin(">");
      case Op::ge: return bin(">=");
      case Op::eq: return bin("==");
      case Op::ne: return bin("!=");
      case Op::logical_and:
        return "(" + condition(n.args[0]) + (narrow_.branch_free ? " & " : " && ") +
               condition(n.args[1]) + ")";
      case Op::logical_or:
        return "(" + condition(n.args[0]) + (narrow_.branch_free ? " | " : " || ") +
               condition(n.args[1]) + ")";
      case Op::logical_xor:
        return "(" + condition(n.args[0]) + " != " + condition(n.args[1]) + ")";
      case Op::logical_not: return "(!" + condition(n.args[0]) + ")";
      default: return "(" + value(id).text + " != " + lit(0) + ")";
    }
  }

  static std::string wrap(const Printed& p, bool parens) {
    return parens ? "(" + p.text + ")" : p.text;
  }

  // The expression as a real.
  Printed value(ExprId id) {
    if (auto it = temp_name_[ctx_].find(id); it != temp_name_[ctx_].end()) {
      if (is_boolean(pool_.op(id)))
        return {"(" + it->second + " ? " + lit(1) + " : " + lit(0) + ")", kAtom};
      return {it->second, kAtom};
    }
    if (const TabulatedFunction* f = lookup(id)) return {lookup_text(*f), kAtom};
    const Node& n = pool_.node(id);
    if (is_boolean(n.op)) return {"(" + condition(id) + " ? " + lit(1) + " : " + lit(0) + ")", kAtom};
    switch (n.op) {
      case Op::constant: return {lit(n.value), kAtom};
      case Op::variable: return {variable(n.var_kind, n.index), kAtom};
      case Op::add:
      case Op::sub: {
        const Printed a = value(n.args[0]), b = value(n.args[1]);
        return {wrap(a, a.prec < kAdditive) + (n.op == Op::add ? " + " : " - ") +
                    wrap(b, b.prec <= kAdditive),
                kAdditive};
      }
      case Op::mul: return multiplicative(" * ", value(n.args[0]), value(n.args[1]));
      case Op::div: {
        if (pool_.is_constant(n.args[1]) && exact_reciprocal(pool_.node(n.args[1]).value))
          return multiplicative(" * ", value(n.args[0]),
                                {lit(1.0 / pool_.node(n.args[1]).value), kAtom});
        if (const std::string f = prof().fast_division(); !f.empty())
          return {f + "(" + value(n.args[0]).text + ", " + value(n.args[1]).text + ")", kAtom};
        return multiplicative(" / ", value(n.args[0]), value(n.args[1]));
      }
      case Op::neg: {
        const Printed a = value(n.args[0]);
        return {"-" + wrap(a, a.prec < kAtom), kUnary};
      }
      case Op::pow: {
        if (auto k = small_integer_exponent(pool_, n.args[1])) {
          if (*k == 0) return {lit(1), kAtom};
          if (*k == 1) return value(n.args[0]);
          return {prof().powi + "<" + std::to_string(*k) + ">(" + value(n.args[0]).text + ")",
                  kAtom};
        }
        if (pool_.is_constant(n.args[1], 0.5))
          return {prof().function(Op::sqrt) + "(" + value(n.args[0]).text + ")", kAtom};
        const Node& e = pool_.node(n.args[1]);
        if (!prof().pow_param.empty() && e.op == Op::variable && e.var_kind == VarKind::param)
          return {prof().pow_param + "(" + value(n.args[0]).text + ", " + value(n.args[1]).text + ")",
                  kAtom};
        return call(n);
      }
      case Op::select:
        return {"(" + condition(n.args[0]) + " ? " + value(n.args[1]).text + " : " +
                    value(n.args[2]).text + ")",
                kAtom};
      case Op::piecewise:
        throw Error("code generation: piecewise not lowered to select (run the pass pipeline)");
      default: return call(n);
    }
  }

  static Printed multiplicative(const char* sym, const Printed& a, const Printed& b) {
    return {wrap(a, a.prec < kMultiplicative) + sym + wrap(b, b.prec <= kMultiplicative),
            kMultiplicative};
  }

  Printed call(const Node& n) {
    std::string s = prof().function(n.op) + "(";
    for (std::size_t i = 0; i < n.args.size(); ++i) {
      if (i) s += ", ";
      s += value(n.args[i]).text;
    }
    return {s + ")", kAtom};
  }

  const Model& m_;
  const ExprPool& pool_;
  const TargetProfile narrow_, wide_;
  const VarNamer& names_;
  std::unordered_map<ExprId, int> uses_;
  std::unordered_set<ExprId> arms_;  // select arms (branch_free profiles only)
  int ctx_ = 0;                      // 0: the kernel's Real; 1: a wide statement (double)
  std::unordered_map<ExprId, const TabulatedFunction*> tabulated_;
  std::unordered_set<int> indexed_;  // table groups whose index is computed
  std::unordered_map<ExprId, std::string> temp_name_[2];
  std::unordered_set<ExprId> visited_[2];
  int next_temp_ = 0;
};

}  // namespace

std::string print_straight_line(const Model& m, const TargetProfile& prof,
                                const std::vector<Assignment>& stmts, const VarNamer& names,
                                std::string_view indent) {
  return StraightLine(m, prof, names).print(stmts, indent);
}

CodeLayout make_layout(const Model& m) {
  if (m.derivatives.size() != m.states.size())
    throw Error("code generation: model '" + m.name + "' has " +
                std::to_string(m.states.size()) + " states but " +
                std::to_string(m.derivatives.size()) + " derivatives");
  if (m.analysis.size() != m.states.size())
    throw Error("code generation: model '" + m.name +
                "' is not analysed (run the pass pipeline first)");
  for (std::size_t i = 0; i < m.states.size(); ++i)
    if (m.analysis[i].jacobian_diag == kNoExpr || m.derivatives[i] == kNoExpr)
      throw Error("code generation: state " + std::to_string(i) +
                  " has no derivative or Jacobian diagonal (run the pass pipeline first)");
  CodeLayout l;
  for (std::size_t k = 0; k < m.algebraics.size(); ++k) {
    const Algebraic& a = m.algebraics[k];
    if (a.expr == kNoExpr)
      throw Error("code generation: algebraic " + std::to_string(k) + " has no definition");
    l.constant_index.push_back(a.once_per_cell ? l.n_constants++ : -1);
    l.local_name.push_back("a" + std::to_string(k) + "_" + sanitise_identifier(a.name));
  }
  return l;
}

VarNamer namer_for(const Model& m, const CodeLayout& l) {
  return [&m, &l](VarKind kind, std::uint32_t i) -> std::string {
    switch (kind) {
      case VarKind::time: return "t";
      case VarKind::state: return "y[" + std::to_string(i) + "]";
      case VarKind::param: return "p[" + std::to_string(i) + "]";
      case VarKind::algebraic:
        if (i >= l.constant_index.size())
          throw Error("code generation: reference to undefined algebraic " + std::to_string(i));
        if (l.constant_index[i] >= 0) return "c[" + std::to_string(l.constant_index[i]) + "]";
        return l.local_name[i];
    }
    throw Error("code generation: bad variable kind");
  };
}

static std::string name_comment(const Symbol& s) { return sanitise_comment(s.name, 60); }

std::vector<Assignment> constants_statements(const Model& m, const CodeLayout& l,
                                             const TargetProfile& prof) {
  std::vector<Assignment> out;
  for (std::size_t k = 0; k < m.algebraics.size(); ++k) {
    if (l.constant_index[k] < 0) continue;
    // Once-per-cell values may only read parameters and earlier constants.
    for (ExprId id : topological_nodes(m.pool, std::span<const ExprId>(&m.algebraics[k].expr, 1))) {
      const Node& n = m.pool.node(id);
      if (n.op != Op::variable) continue;
      const bool ok = n.var_kind == VarKind::param ||
                      (n.var_kind == VarKind::algebraic && n.index < k &&
                       l.constant_index[n.index] >= 0);
      if (!ok)
        throw Error("code generation: once-per-cell algebraic '" +
                    sanitise_comment(m.algebraics[k].name) +
                    "' reads a value that changes during a run");
    }
    out.push_back({"c[" + std::to_string(l.constant_index[k]) + "]", m.algebraics[k].expr, "",
                   name_comment(m.algebraics[k])});
  }
  return out;
}

Assignment every_step_algebraic(const Model& m, const CodeLayout& l, const TargetProfile& prof,
                                std::size_t k) {
  const Algebraic& a = m.algebraics[k];
  return {"[[maybe_unused]] const " + (a.wide ? std::string("double") : prof.real) + " " + l.local_name[k],
          a.expr, "",
          std::string(a.synthetic ? "synthetic" : "") +
              (a.wide ? (a.synthetic ? "; double in float kernels" : "double in float kernels") : ""),
          a.wide};
}

// `only`: the algebraics to print (all every-step ones when empty).
static void every_step_algebraics(const Model& m, const CodeLayout& l, const TargetProfile& prof,
                                  std::vector<Assignment>& out,
                                  const std::vector<std::uint8_t>& only = {}) {
  for (std::size_t k = 0; k < m.algebraics.size(); ++k) {
    if (l.constant_index[k] >= 0 || (!only.empty() && !only[k])) continue;
    out.push_back(every_step_algebraic(m, l, prof, k));
  }
}

std::vector<Assignment> rhs_statements(const Model& m, const CodeLayout& l,
                                       const TargetProfile& prof, bool with_jacobian) {
  std::vector<Assignment> out;
  every_step_algebraics(m, l, prof, out);
  for (std::size_t i = 0; i < m.states.size(); ++i)
    out.push_back({"dydt[" + std::to_string(i) + "]", m.derivatives[i], "",
                   "d/dt " + name_comment(m.states[i])});
  if (with_jacobian)
    for (std::size_t i = 0; i < m.states.size(); ++i)
      out.push_back({"jdiag[" + std::to_string(i) + "]", m.analysis[i].jacobian_diag, "", ""});
  return out;
}

std::vector<Assignment> threshold_statements(const Model& m, const CodeLayout& l,
                                             const TargetProfile& prof) {
  // Only the algebraics the distances read (most read a state and a constant only):
  // dependency order means each algebraic reads only earlier ones, so one backward sweep
  // marks them all.
  std::vector<std::uint8_t> needed(m.algebraics.size(), 0);
  const auto mark = [&](ExprId e) {
    for (std::uint32_t k : algebraic_refs(m.pool, e)) needed[k] = 1;
  };
  for (ExprId g : m.thresholds) mark(g);
  for (std::size_t k = m.algebraics.size(); k-- > 0;)
    if (needed[k] && l.constant_index[k] < 0) mark(m.algebraics[k].expr);
  std::vector<Assignment> out;
  every_step_algebraics(m, l, prof, out, needed);
  for (std::size_t k = 0; k < m.thresholds.size(); ++k)
    out.push_back({"g[" + std::to_string(k) + "]", m.thresholds[k], "", ""});
  return out;
}

int block_entries(const Model& m) {
  int n = 0;
  for (const LinearBlock& b : m.blocks) n += int(b.states.size() * b.states.size());
  return n;
}

std::vector<Assignment> rhs_blocks_statements(const Model& m, const CodeLayout& l,
                                              const TargetProfile& prof) {
  std::vector<Assignment> out = rhs_statements(m, l, prof, true);
  int k = 0;
  for (const LinearBlock& b : m.blocks)
    for (ExprId e : b.jacobian) out.push_back({"A[" + std::to_string(k++) + "]", e, "", ""});
  return out;
}

std::string block_structure(const Model& m, const std::string& qualifier, const std::string& indent) {
  std::ostringstream o;
  const std::string fn = indent + qualifier + "constexpr int ";
  o << indent << "static constexpr int kBlockEntries = " << block_entries(m) << ";\n";
  o << fn << "n_blocks() const { return " << m.blocks.size() << "; }\n";
  const auto per_block = [&](const char* name, auto value) {
    o << fn << name << "(int b) const {\n" << indent << "  switch (b) {\n";
    for (std::size_t b = 0; b < m.blocks.size(); ++b)
      o << indent << "    case " << b << ": return " << value(b) << ";\n";
    o << indent << "    default: return 0;\n" << indent << "  }\n" << indent << "}\n";
  };
  per_block("block_size", [&](std::size_t b) { return m.blocks[b].states.size(); });
  int offset = 0;
  std::vector<int> offsets;
  for (const LinearBlock& b : m.blocks) {
    offsets.push_back(offset);
    offset += int(b.states.size() * b.states.size());
  }
  per_block("block_offset", [&](std::size_t b) { return offsets[b]; });
  // block_state(b, r): a switch on b·kMaxBlockStates + r.
  o << fn << "block_state(int b, int r) const {\n" << indent << "  switch (b * " << kMaxBlockStates
    << " + r) {\n";
  for (std::size_t b = 0; b < m.blocks.size(); ++b)
    for (std::size_t r = 0; r < m.blocks[b].states.size(); ++r)
      o << indent << "    case " << b * kMaxBlockStates + r << ": return " << m.blocks[b].states[r] << ";\n";
  o << indent << "    default: return 0;\n" << indent << "  }\n" << indent << "}\n";
  o << fn << "block_of(int i) const {\n" << indent << "  switch (i) {\n";
  for (std::size_t i = 0; i < m.analysis.size(); ++i)
    if (m.analysis[i].block >= 0)
      o << indent << "    case " << i << ": return " << m.analysis[i].block << ";\n";
  o << indent << "    default: return -1;\n" << indent << "  }\n" << indent << "}\n";
  return o.str();
}

std::vector<Assignment> algebraics_statements(const Model& m, const CodeLayout& l,
                                              const TargetProfile& prof) {
  std::vector<Assignment> out;
  every_step_algebraics(m, l, prof, out);
  const VarNamer names = namer_for(m, l);
  for (std::size_t k = 0; k < m.algebraics.size(); ++k)
    out.push_back({"out[" + std::to_string(k) + "]", kNoExpr,
                   names(VarKind::algebraic, static_cast<std::uint32_t>(k)), ""});
  return out;
}

std::string print_tables(const Tabulation& t, const TargetProfile& prof, const std::string& qualifier) {
  std::ostringstream out;
  const bool f32 = prof.cuda && prof.use_float;
  // C++: a variable template, so a float kernel gathers floats (a float loop over cells
  // does not vectorise gathers of doubles).
  const std::string type = prof.cuda ? prof.real : "T";
  out << "// Lookup tables of functions of V (model/passes/tabulate.hpp), row-major: row i at\n"
         "// V = lo + i * step holds every function of the group.\n";
  for (std::size_t g = 0; g < t.groups.size(); ++g) {
    const TableGroup& grp = t.groups[g];
    out << "// table " << g << ": " << grp.rows << " rows from " << grp.lo << " by " << grp.step << ":";
    for (std::uint32_t f : grp.functions) out << " " << sanitise_comment(t.functions[f].label, 40) << ";";
    out << "\n" << (prof.cuda ? "" : "template <class T> ") << qualifier << type << " " << prof.table_prefix << "_lut" << g << "[" << grp.values.size()
        << "] = {";
    char buf[40];
    for (std::size_t k = 0; k < grp.values.size(); ++k) {
      if (k % 8 == 0) out << "\n ";
      std::snprintf(buf, sizeof buf, f32 ? " %.9g," : " %.17g,",
                    f32 ? static_cast<double>(static_cast<float>(grp.values[k])) : grp.values[k]);
      out << buf;
    }
    out << "\n};\n";
  }
  return out.str();
}

std::string layout_comment(const Model& m, const CodeLayout& l) {
  std::ostringstream out;
  out << "// Model: " << sanitise_comment(m.name) << "\n";
  if (!m.citation.empty()) out << "// Source: " << sanitise_comment(m.citation, 200) << "\n";
  out << "// States (y[i], initial value):\n";
  for (std::size_t i = 0; i < m.states.size(); ++i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", m.states[i].initial);
    out << "//   y[" << i << "] " << name_comment(m.states[i]) << " = " << buf
        << (m.analysis[i].is_gate ? "  (gate)" : "") << "\n";
  }
  out << "// Parameters (p[i], default value):\n";
  for (std::size_t i = 0; i < m.parameters.size(); ++i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", m.parameters[i].value);
    out << "//   p[" << i << "] " << name_comment(m.parameters[i]) << " = " << buf << "\n";
  }
  if (l.n_constants) {
    out << "// Once-per-cell constants (c[i]):\n";
    for (std::size_t k = 0; k < m.algebraics.size(); ++k)
      if (l.constant_index[k] >= 0)
        out << "//   c[" << l.constant_index[k] << "] " << name_comment(m.algebraics[k]) << "\n";
  }
  return out.str();
}

}  // namespace hw::model
