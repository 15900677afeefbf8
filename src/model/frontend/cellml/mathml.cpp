// MathML content → MathNode trees, and equations → (lhs, ode?, rhs).
//
// Why a separate tree: whether a <ci> is a state, a parameter or an algebraic is only
// known once every component and connection has been read, so the MathML is kept as
// written and lowered to the ExprPool by the flattener. Anything outside the supported
// subset is an InputError naming the element and its line, never silently dropped.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numbers>
#include <set>

#include "model/frontend/cellml/xml_util.hpp"

namespace hw::model::cellml {

std::optional<double> parse_number(const std::string& raw) {
  std::string t = trim(raw);
  if (t.empty()) return std::nullopt;
  const char* b = t.c_str();
  char* e = nullptr;
  errno = 0;
  double v = std::strtod(b, &e);
  if (e != b + t.size()) return std::nullopt;
  // strtod accepts "inf"/"nan"/hex; a model file should not.
  for (char c : t)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
          c == '+' || c == '-'))
      return std::nullopt;
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

namespace {

const std::set<std::string>& known_operators() {
  static const std::set<std::string> ops = {
      "plus",    "minus",   "times",   "divide",  "power",   "root",    "exp",
      "ln",      "log",     "abs",     "floor",   "ceiling", "min",     "max",
      "rem",     "sin",     "cos",     "tan",     "sec",     "csc",     "cot",
      "arcsin",  "arccos",  "arctan",  "arcsec",  "arccsc",  "arccot",  "sinh",
      "cosh",    "tanh",    "sech",    "csch",    "coth",    "arcsinh", "arccosh",
      "arctanh", "arcsech", "arccsch", "arccoth", "eq",      "neq",     "lt",
      "gt",      "leq",     "geq",     "and",     "or",      "xor",     "not"};
  return ops;
}

class MathReader {
 public:
  explicit MathReader(const std::string& file) : file_(file) {}

  std::unique_ptr<MathNode> expr(const xmlNode* n) {
    check_mathml(n);
    std::string name = local_name(n);
    auto node = std::make_unique<MathNode>();
    node->line = line_of(n);
    if (name == "cn") return number(n);
    if (name == "ci") {
      node->kind = MathNode::Kind::variable;
      node->name = trim(text_of(n));
      if (node->name.empty()) fail_at(file_, n, "empty <ci> element");
      return node;
    }
    if (name == "pi") return constant(n, std::numbers::pi);
    if (name == "exponentiale") return constant(n, std::numbers::e);
    if (name == "true") return constant(n, 1.0);
    if (name == "false") return constant(n, 0.0);
    if (name == "infinity") return constant(n, std::numeric_limits<double>::infinity());
    if (name == "notanumber") return constant(n, std::numeric_limits<double>::quiet_NaN());
    if (name == "piecewise") return piecewise(n);
    if (name == "apply") return apply(n);
    fail_at(file_, n, "unsupported MathML element <" + name + ">");
  }

  // <apply><eq/> lhs rhs </apply> at the top of a <math>.
  Equation equation(const xmlNode* n) {
    check_mathml(n);
    if (local_name(n) != "apply")
      fail_at(file_, n, "expected an equation <apply><eq/>...</apply>, found <" +
                            local_name(n) + ">");
    auto kids = elements(n);
    if (kids.empty() || local_name(kids[0]) != "eq" || kids.size() != 3)
      fail_at(file_, n, "expected an equation <apply><eq/> lhs rhs</apply>");
    Equation eq;
    eq.line = line_of(n);
    const xmlNode* lhs = kids[1];
    check_mathml(lhs);
    if (local_name(lhs) == "ci") {
      eq.lhs = trim(text_of(lhs));
      if (eq.lhs.empty()) fail_at(file_, lhs, "empty <ci> element");
    } else if (local_name(lhs) == "apply" && !elements(lhs).empty() &&
               local_name(elements(lhs)[0]) == "diff") {
      auto d = diff(lhs);
      eq.is_ode = true;
      eq.lhs = d->name;
      eq.bvar = d->bvar;
    } else {
      fail_at(file_, lhs,
              "the left-hand side of an equation must be a variable <ci> or a derivative "
              "<apply><diff/>...</apply> (equations written as 'expression = variable' are "
              "not supported)");
    }
    eq.rhs = expr(kids[2]);
    return eq;
  }

 private:
  void check_mathml(const xmlNode* n) const {
    if (ns_of(n) != kMathmlNs)
      fail_at(file_, n, "element <" + local_name(n) + "> inside <math> is not MathML");
  }

  static std::vector<const xmlNode*> elements(const xmlNode* n) {
    std::vector<const xmlNode*> out;
    for (const xmlNode* c = n->children; c; c = c->next)
      if (is_element(c)) out.push_back(c);
    return out;
  }

  std::unique_ptr<MathNode> constant(const xmlNode* n, double v) {
    if (!elements(n).empty()) fail_at(file_, n, "<" + local_name(n) + "> must be empty");
    auto node = std::make_unique<MathNode>();
    node->line = line_of(n);
    node->value = v;
    return node;
  }

  std::unique_ptr<MathNode> number(const xmlNode* n) {
    auto node = std::make_unique<MathNode>();
    node->line = line_of(n);
    std::string type = attr(n, "type").value_or("real");
    if (attr(n, "base")) fail_at(file_, n, "<cn base=...> is not supported");
    // Split the text at a <sep/> for e-notation and rational.
    std::string before, after;
    bool sep = false;
    for (const xmlNode* c = n->children; c; c = c->next) {
      if (is_element(c)) {
        if (local_name(c) != "sep" || sep)
          fail_at(file_, c, "unexpected <" + local_name(c) + "> inside <cn>");
        sep = true;
      } else if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
        (sep ? after : before) += text_of(c);
      } else if (c->type != XML_COMMENT_NODE) {
        fail_at(file_, n, "unexpected content inside <cn>");
      }
    }
    auto bad = [&](const std::string& what) {
      fail_at(file_, n, "invalid number in <cn>: " + what);
    };
    auto a = parse_number(before);
    if (!a) bad("'" + trim(before) + "'");
    if (type == "e-notation" || type == "rational") {
      if (!sep) bad("type=\"" + type + "\" needs <sep/>");
      auto b = parse_number(after);
      if (!b) bad("'" + trim(after) + "'");
      double v = type == "rational" ? *a / *b : *a * std::pow(10.0, *b);
      if (!std::isfinite(v)) bad("value out of range");
      node->value = v;
    } else if (type == "real" || type == "integer" || type == "double") {
      if (sep) bad("<sep/> only allowed with type=\"e-notation\" or \"rational\"");
      node->value = *a;
    } else {
      bad("unsupported type=\"" + type + "\"");
    }
    return node;
  }

  std::unique_ptr<MathNode> piecewise(const xmlNode* n) {
    auto node = std::make_unique<MathNode>();
    node->kind = MathNode::Kind::piecewise;
    node->line = line_of(n);
    std::unique_ptr<MathNode> otherwise;
    for (const xmlNode* c : elements(n)) {
      check_mathml(c);
      auto kids = elements(c);
      if (local_name(c) == "piece") {
        if (otherwise) fail_at(file_, c, "<piece> after <otherwise>");
        if (kids.size() != 2) fail_at(file_, c, "<piece> needs a value and a condition");
        auto value = expr(kids[0]);
        node->args.push_back(expr(kids[1]));
        node->args.push_back(std::move(value));
      } else if (local_name(c) == "otherwise") {
        if (otherwise) fail_at(file_, c, "more than one <otherwise>");
        if (kids.size() != 1) fail_at(file_, c, "<otherwise> needs exactly one value");
        otherwise = expr(kids[0]);
      } else {
        fail_at(file_, c, "unexpected <" + local_name(c) + "> inside <piecewise>");
      }
    }
    if (node->args.empty() && !otherwise) fail_at(file_, n, "empty <piecewise>");
    if (otherwise) {
      node->args.push_back(std::move(otherwise));
      node->has_otherwise = true;
    }
    return node;
  }

  std::string bvar_name(const xmlNode* b) {
    auto kids = elements(b);
    if (kids.size() == 2 && local_name(kids[1]) == "degree") {
      auto deg = elements(kids[1]);
      if (deg.size() != 1 || local_name(deg[0]) != "cn" || number(deg[0])->value != 1.0)
        fail_at(file_, kids[1], "only first derivatives are supported");
      kids.pop_back();
    }
    if (kids.size() != 1 || local_name(kids[0]) != "ci")
      fail_at(file_, b, "<bvar> must hold one <ci>");
    std::string s = trim(text_of(kids[0]));
    if (s.empty()) fail_at(file_, b, "empty <ci> in <bvar>");
    return s;
  }

  std::unique_ptr<MathNode> diff(const xmlNode* n) {
    auto kids = elements(n);  // diff, bvar, ci
    auto node = std::make_unique<MathNode>();
    node->kind = MathNode::Kind::diff;
    node->line = line_of(n);
    if (kids.size() != 3 || local_name(kids[1]) != "bvar" || local_name(kids[2]) != "ci")
      fail_at(file_, n,
              "a derivative must be written <apply><diff/><bvar><ci>t</ci></bvar>"
              "<ci>y</ci></apply>");
    check_mathml(kids[1]);
    check_mathml(kids[2]);
    node->bvar = bvar_name(kids[1]);
    node->name = trim(text_of(kids[2]));
    if (node->name.empty()) fail_at(file_, kids[2], "empty <ci> element");
    return node;
  }

  std::unique_ptr<MathNode> apply(const xmlNode* n) {
    auto kids = elements(n);
    if (kids.empty()) fail_at(file_, n, "empty <apply>");
    check_mathml(kids[0]);
    std::string op = local_name(kids[0]);
    if (op == "diff") return diff(n);
    if (!known_operators().count(op))
      fail_at(file_, kids[0], "unsupported MathML operator <" + op + ">");
    if (!elements(kids[0]).empty())
      fail_at(file_, kids[0], "operator <" + op + "/> must be empty");
    auto node = std::make_unique<MathNode>();
    node->kind = MathNode::Kind::apply;
    node->name = op;
    node->line = line_of(n);
    for (std::size_t i = 1; i < kids.size(); ++i) {
      const xmlNode* k = kids[i];
      check_mathml(k);
      std::string kn = local_name(k);
      if (kn == "degree" || kn == "logbase") {
        if ((kn == "degree" && op != "root") || (kn == "logbase" && op != "log"))
          fail_at(file_, k, "<" + kn + "> is not allowed with <" + op + "/>");
        auto q = elements(k);
        if (q.size() != 1) fail_at(file_, k, "<" + kn + "> must hold one expression");
        auto& slot = kn == "degree" ? node->degree : node->logbase;
        if (slot) fail_at(file_, k, "more than one <" + kn + ">");
        slot = expr(q[0]);
        continue;
      }
      node->args.push_back(expr(k));
    }
    check_arity(n, *node);
    return node;
  }

  void check_arity(const xmlNode* n, const MathNode& node) const {
    const std::string& op = node.name;
    std::size_t k = node.args.size();
    auto need = [&](bool ok, const char* what) {
      if (!ok) fail_at(file_, n, "<" + op + "/> takes " + what + ", got " + std::to_string(k));
    };
    static const std::set<std::string> binary = {"divide", "power", "rem", "neq"};
    static const std::set<std::string> nary = {"plus", "times", "min", "max", "and",
                                               "or",   "xor",   "eq",  "lt",  "gt",
                                               "leq",  "geq"};
    if (op == "minus") need(k == 1 || k == 2, "one or two operands");
    else if (binary.count(op)) need(k == 2, "two operands");
    else if (op == "plus" || op == "times") need(k >= 1, "at least one operand");
    else if (nary.count(op)) need(k >= 2, "at least two operands");
    else need(k == 1, "one operand");
  }

  const std::string& file_;
};

}  // namespace

void read_math(const xmlNode* math, const std::string& file, RawComponent& comp) {
  MathReader r(file);
  for (const xmlNode* c = math->children; c; c = c->next) {
    if (!is_element(c)) continue;
    comp.equations.push_back(r.equation(c));
  }
}

}  // namespace hw::model::cellml
