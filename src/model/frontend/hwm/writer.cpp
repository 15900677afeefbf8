// Printer of a Model as .hwm text (the CellML→native converter prints through it).
//
// Guarantee: parse_hwm(write_hwm(m)) has the same symbols in the same order and, for
// every algebraic and derivative, the same expression tree. To keep trees identical the
// printer parenthesises by the parser's precedence and associativity rather than by
// arithmetic laws (a + (b + c) keeps its parentheses), writes numbers in the shortest
// form that reads back to the same double, and writes a constant -3 as "-3" but the
// negation of 3 as "-(3)" (the parser folds a minus sign on a literal into the literal).
// Printers never simplify. The only things not preserved bit for bit are NaN payloads and
// the flags set by passes (synthetic, once_per_cell, analysis), which are not part of
// the language.
#include <optional>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "model/frontend/hwm/hwm.hpp"

namespace hw::model {

namespace {

// Marks a place where a long line may break (after a binary operator or a comma: the
// parser accepts a newline there).
constexpr char kBreak = '\x01';
constexpr std::size_t kLineWidth = 96;

enum Prec : int {
  p_if = 1, p_or, p_xor, p_and, p_not, p_cmp, p_add, p_mul, p_unary, p_pow, p_atom,
};

std::string number(double v) {
  if (std::isnan(v)) return "(0/0)";
  if (std::isinf(v)) return v > 0 ? "(1/0)" : "(-1/0)";
  char buf[64];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  auto start = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  if (!start(s[0])) return false;
  for (char c : s)
    if (!(start(c) || (c >= '0' && c <= '9')) || (c & 0x80)) return false;
  return true;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') continue;
    else out += c;
  }
  return out + "\"";
}

class Writer {
 public:
  explicit Writer(const Model& m) : m_(m) {}

  std::string run() {
    check_names();
    std::ostringstream out;
    out << "model " << model_name() << "\n";
    if (!m_.citation.empty()) out << "citation " << quoted(m_.citation) << "\n";
    if (!m_.documentation.empty()) out << "description " << quoted(m_.documentation) << "\n";
    out << "\n" << decl_line("time " + m_.time.name, m_.time) << "\n";

    std::size_t width = 0;
    for (const auto& p : m_.parameters) width = std::max(width, p.name.size());
    for (const auto& s : m_.states) width = std::max(width, s.name.size());
    width = std::min<std::size_t>(width, 28);
    auto pad = [width](const std::string& n) {
      return n + std::string(n.size() < width ? width - n.size() : 0, ' ');
    };

    if (!m_.parameters.empty()) out << "\n# Parameters\n";
    for (const auto& p : m_.parameters)
      out << decl_line("param " + pad(p.name) + " = " + number(p.value), p) << "\n";
    if (!m_.states.empty()) out << "\n# States and initial values\n";
    for (const auto& s : m_.states)
      out << decl_line("state " + pad(s.name) + " = " + number(s.initial), s) << "\n";
    if (!m_.algebraics.empty()) out << "\n# Algebraic variables\n";
    for (const auto& a : m_.algebraics)
      out << wrap(a.name + " = " + expr(a.expr, p_if) + suffix(a)) << "\n";
    if (!m_.states.empty()) out << "\n# Equations\n";
    for (std::size_t i = 0; i < m_.states.size(); ++i) {
      ExprId d = i < m_.derivatives.size() ? m_.derivatives[i] : kNoExpr;
      if (d == kNoExpr) throw Error("write_hwm: state '" + m_.states[i].name + "' has no derivative");
      out << wrap("d/dt " + m_.states[i].name + " = " + expr(d, p_if)) << "\n";
    }
    return out.str();
  }

 private:
  void check_name(const std::string& n, const char* what) const {
    if (!is_identifier(n))
      throw Error(std::string("write_hwm: the ") + what + " name '" + n +
                  "' is not an identifier of the model language");
    if (is_hwm_reserved_word(n))
      throw Error(std::string("write_hwm: the ") + what + " name '" + n + "' is a reserved word");
  }
  void check_names() const {
    check_name(m_.time.name, "time");
    for (const auto& p : m_.parameters) check_name(p.name, "parameter");
    for (const auto& s : m_.states) check_name(s.name, "state");
    for (const auto& a : m_.algebraics) check_name(a.name, "algebraic variable");
  }

  std::string model_name() const {
    std::string n = m_.name;
    for (char& c : n)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_') || (c & 0x80)) c = '_';
    if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) n = "model_" + n;
    return n;
  }

  // The units as the compact syntax spells them: the name as written when the parser
  // knows it, else format_units() of the resolved units (CellML names such as
  // "microA_per_cm2" are model-local definitions the .hwm syntax does not have).
  static std::optional<std::string> units_text(const Symbol& s) {
    if (!s.units_name.empty() && s.units_name.find_first_of("[]#\n") == std::string::npos) {
      try {
        parse_units_expr(s.units_name);
        return s.units_name;
      } catch (const Error&) {
      }
    }
    if (s.units) return format_units(*s.units);
    return std::nullopt;
  }

  // " [units] @term  # description"
  static std::string suffix(const Symbol& s) {
    std::string out;
    if (auto units = units_text(s)) out += " [" + *units + "]";
    if (!s.ontology.empty()) {
      bool ok = true;
      for (char c : s.ontology)
        ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
                    c == ':' || c == '/' || c == '-') && !(c & 0x80);
      if (ok) out += " @" + s.ontology;
    }
    if (!s.description.empty()) {
      std::string d = s.description;
      for (char& c : d)
        if (static_cast<unsigned char>(c) < 0x20) c = ' ';
      out += "  # " + d;
    }
    return out;
  }

  std::string decl_line(const std::string& head, const Symbol& s) const {
    return head + suffix(s);
  }

  // Greedy line filling at the break marks; continuation lines are indented.
  static std::string wrap(const std::string& text) {
    std::string out, line;
    std::string piece;
    auto flush_piece = [&]() {
      if (!line.empty() && line.size() + piece.size() > kLineWidth &&
          line.find_first_not_of(' ') != std::string::npos && line.size() > 8) {
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
        line = "    ";
        std::size_t b = piece.find_first_not_of(' ');
        piece = b == std::string::npos ? "" : piece.substr(b);
      }
      line += piece;
      piece.clear();
    };
    for (char c : text) {
      if (c == kBreak) {
        flush_piece();
        continue;
      }
      piece += c;
    }
    flush_piece();
    return out + line;
  }

  std::string paren_if(bool need, const std::string& s) const {
    return need ? "(" + s + ")" : s;
  }

  static int binary_prec(Op op) {
    switch (op) {
      case Op::logical_or: return p_or;
      case Op::logical_xor: return p_xor;
      case Op::logical_and: return p_and;
      case Op::lt: case Op::le: case Op::gt: case Op::ge: case Op::eq: case Op::ne: return p_cmp;
      case Op::add: case Op::sub: return p_add;
      case Op::mul: case Op::div: return p_mul;
      case Op::pow: return p_pow;
      default: return 0;
    }
  }
  static const char* binary_symbol(Op op) {
    switch (op) {
      case Op::logical_or: return " or ";
      case Op::logical_xor: return " xor ";
      case Op::logical_and: return " and ";
      case Op::lt: return " < ";
      case Op::le: return " <= ";
      case Op::gt: return " > ";
      case Op::ge: return " >= ";
      case Op::eq: return " == ";
      case Op::ne: return " != ";
      case Op::add: return " + ";
      case Op::sub: return " - ";
      case Op::mul: return "*";
      case Op::div: return "/";
      case Op::pow: return "^";
      default: return "?";
    }
  }

  // The precedence of the text expr() prints for `id` (before any parentheses).
  int prec_of(ExprId id) const {
    const Node& n = m_.pool.node(id);
    switch (n.op) {
      case Op::constant:
        return std::isfinite(n.value) && std::signbit(n.value) ? p_unary : p_atom;
      case Op::variable: return p_atom;
      case Op::neg: return p_unary;
      case Op::logical_not: return p_not;
      case Op::select: return p_if;
      default: {
        int p = binary_prec(n.op);
        return p ? p : p_atom;
      }
    }
  }

  // Prints `id`, in parentheses when its precedence is below `min`.
  std::string expr(ExprId id, int min) const {
    return paren_if(prec_of(id) < min, raw(id));
  }

  std::string raw(ExprId id) const {
    const Node& n = m_.pool.node(id);
    switch (n.op) {
      case Op::constant: return number(n.value);
      case Op::variable: return m_.variable_name(n.var_kind, n.index);
      case Op::neg: {
        const Node& a = m_.pool.node(n.args[0]);
        // "-3" would read back as the constant -3, so the negation of a literal keeps
        // parentheses; so does a negative literal, to avoid "--".
        if (a.op == Op::constant && std::isfinite(a.value)) return "-(" + number(a.value) + ")";
        return "-" + expr(n.args[0], p_unary);
      }
      case Op::logical_not: return "not " + expr(n.args[0], p_not);
      case Op::select:
        return "if " + expr(n.args[0], p_or) + " then " + std::string(1, kBreak) +
               expr(n.args[1], p_or) + " else " + std::string(1, kBreak) + expr(n.args[2], p_if);
      case Op::piecewise: {
        std::string s = "piecewise(";
        std::size_t count = n.args.size();
        const Node& last = m_.pool.node(n.args.back());
        if (count > 1 && last.op == Op::constant && std::isnan(last.value)) --count;
        for (std::size_t i = 0; i < count; ++i) {
          if (i) s += ", " + std::string(1, kBreak);
          s += expr(n.args[i], p_if);
        }
        return s + ")";
      }
      default: break;
    }
    int p = binary_prec(n.op);
    if (p && n.args.size() == 2) {
      int left_min, right_min;
      if (n.op == Op::pow) {
        left_min = p_atom;     // (a^b)^c and (-2)^x need parentheses
        right_min = p_unary;   // a^-b and a^b^c read back as written
      } else if (p == p_cmp) {
        left_min = right_min = p_cmp + 1;  // comparisons do not chain
      } else {
        left_min = p;
        right_min = p + 1;
      }
      return expr(n.args[0], left_min) + binary_symbol(n.op) + std::string(1, kBreak) +
             expr(n.args[1], right_min);
    }
    // Functions.
    std::string name;
    switch (n.op) {
      case Op::abs: name = "abs"; break;
      case Op::min: name = "min"; break;
      case Op::max: name = "max"; break;
      case Op::rem: name = "rem"; break;
      default: name = std::string(op_info(n.op).name); break;
    }
    std::string s = name + "(";
    for (std::size_t i = 0; i < n.args.size(); ++i) {
      if (i) s += ", " + std::string(1, kBreak);
      s += expr(n.args[i], p_if);
    }
    return s + ")";
  }

  const Model& m_;
};

}  // namespace

std::string write_hwm(const Model& m) { return Writer(m).run(); }

}  // namespace hw::model
