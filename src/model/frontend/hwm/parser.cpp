// Parser of the .hwm language (grammar and rules: docs/model-language.md).
//
// One pass over the tokens builds expressions straight into a scratch ExprPool, with every
// name as a placeholder variable; once all declarations are known (algebraics, and even
// parameters, may be used before they are declared) the placeholders are resolved and
// the expressions are copied into the Model's own pool, so the Model never holds a
// placeholder. Syntax errors skip to the next line so that one run reports many problems;
// recursion is bounded (kMaxDepth) so hostile input cannot exhaust the stack.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <numbers>
#include <sstream>
#include <unordered_map>

#include "model/frontend/hwm/hwm.hpp"
#include "model/frontend/hwm/lexer.hpp"
#include "model/ir/units.hpp"

namespace hw::model {

namespace {

using hwm::Tok;
using hwm::Token;

constexpr int kMaxDepth = 256;
constexpr std::uint32_t kPlaceholder = 0x80000000u;

struct FunctionInfo {
  std::string_view name;
  Op op;
  int arity;  // -1: piecewise
};

constexpr FunctionInfo kFunctions[] = {
    {"exp", Op::exp, 1},     {"log", Op::log, 1},     {"ln", Op::log, 1},
    {"log10", Op::log10, 1}, {"sqrt", Op::sqrt, 1},   {"abs", Op::abs, 1},
    {"floor", Op::floor, 1}, {"ceil", Op::ceil, 1},   {"sin", Op::sin, 1},
    {"cos", Op::cos, 1},     {"tan", Op::tan, 1},     {"asin", Op::asin, 1},
    {"acos", Op::acos, 1},   {"atan", Op::atan, 1},   {"sinh", Op::sinh, 1},
    {"cosh", Op::cosh, 1},   {"tanh", Op::tanh, 1},   {"asinh", Op::asinh, 1},
    {"acosh", Op::acosh, 1}, {"atanh", Op::atanh, 1}, {"min", Op::min, 2},
    {"max", Op::max, 2},     {"rem", Op::rem, 2},     {"pow", Op::pow, 2},
    {"piecewise", Op::piecewise, -1},
};

const FunctionInfo* find_function(std::string_view name) {
  for (const auto& f : kFunctions)
    if (f.name == name) return &f;
  return nullptr;
}

constexpr std::string_view kReserved[] = {"and", "or", "not", "xor", "if", "then", "else"};

// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
// neighbours ("vlot" for "volt") each cost 1.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t w = b.size() + 1;
  std::vector<std::size_t> d((a.size() + 1) * w);
  for (std::size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      std::size_t v = std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1,
                                d[(i - 1) * w + j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        v = std::min(v, d[(i - 2) * w + j - 2] + 1);
      d[i * w + j] = v;
    }
  return d[a.size() * w + b.size()];
}

// " (did you mean 'x'?)" for the closest candidate, or "" when none is close.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  if (name.size() > 200) return "";
  std::string best;
  std::size_t best_d = std::max<std::size_t>(1, name.size() / 3) + 1;
  for (const auto& c : candidates) {
    if (c.size() > 200) continue;
    std::string lc = c, ln(name);
    std::transform(lc.begin(), lc.end(), lc.begin(), ::tolower);
    std::transform(ln.begin(), ln.end(), ln.begin(), ::tolower);
    std::size_t d = lc == ln ? 0 : edit_distance(name, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

// Thrown after a syntax error has been recorded; the statement loop skips to the next line.
struct SyntaxAbort {};

struct Decl {
  VarKind kind;
  std::uint32_t index;
  SourceLoc loc;
  const char* what;  // "param", "state", ...
};

struct Ode {
  std::string name;
  SourceLoc loc;
  ExprId expr;
};

class Parser {
 public:
  Parser(std::string_view text, const std::string& file) : file_(file) {
    auto lexed = hwm::lex(text, file_, sink_);
    toks_ = std::move(lexed.tokens);
    comments_ = std::move(lexed.trailing_comments);
    m_.source_file = file;
  }

  Model run() {
    while (peek().kind != Tok::end) {
      if (peek().kind == Tok::newline) {
        ++pos_;
        continue;
      }
      if (error_count() > kMaxErrors) break;
      depth_ = 0;  // a SyntaxAbort thrown inside a DepthGuard's constructor skips its undo
      try {
        statement();
      } catch (const SyntaxAbort&) {
        while (peek().kind != Tok::newline && peek().kind != Tok::end) ++pos_;
      }
    }
    if (!sink_.has_errors()) finish();
    sink_.throw_if_errors();
    return std::move(m_);
  }

 private:
  // ---- tokens -------------------------------------------------------------------------
  const Token& peek(std::size_t ahead = 0) const {
    std::size_t i = std::min(pos_ + ahead, toks_.size() - 1);
    return toks_[i];
  }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool is_word(const Token& t, std::string_view w) const {
    return t.kind == Tok::ident && t.text == w;
  }
  SourceLoc loc(const Token& t) const { return {file_, t.line, t.col}; }

  std::size_t error_count() const { return sink_.all().size(); }

  [[noreturn]] void fail(const Token& t, const std::string& msg) {
    sink_.error(loc(t), msg);
    throw SyntaxAbort{};
  }
  std::string found(const Token& t) const {
    switch (t.kind) {
      case Tok::ident: return "'" + t.text + "'";
      case Tok::number: return "number " + t.text;
      default: return hwm::token_name(t.kind);
    }
  }
  const Token& expect(Tok kind, const char* context) {
    if (peek().kind != kind)
      fail(peek(), std::string("expected ") + hwm::token_name(kind) + " " + context +
                       ", found " + found(peek()));
    return next();
  }
  void skip_newlines() {
    while (peek().kind == Tok::newline) ++pos_;
  }

  // ---- statements ---------------------------------------------------------------------
  void statement() {
    const Token& t = peek();
    if (t.kind != Tok::ident)
      fail(t, "expected a statement (model, citation, time, param, state, d/dt or "
              "name = expression), found " + found(t));
    Symbol* declared = nullptr;
    bool keyword_form = peek(1).kind != Tok::assign;
    if (t.text == "d" && peek(1).kind == Tok::slash && is_word(peek(2), "dt")) {
      ode();
    } else if (keyword_form && t.text == "model") {
      header_name();
    } else if (keyword_form && (t.text == "citation" || t.text == "description")) {
      header_string();
    } else if (keyword_form && t.text == "time") {
      declared = time_decl();
    } else if (keyword_form && (t.text == "param" || t.text == "state")) {
      declared = value_decl();
    } else if (peek(1).kind == Tok::assign) {
      declared = algebraic();
    } else {
      fail(peek(1), "expected '=' after '" + t.text + "' (a definition is name = expression)");
    }
    const Token& end = peek();
    if (end.kind != Tok::newline && end.kind != Tok::end)
      fail(end, "expected end of line, found " + found(end));
    if (declared) {
      auto c = comments_.find(end.line);
      if (c != comments_.end() && declared->description.empty()) declared->description = c->second;
    }
  }

  void header_name() {
    const Token& kw = next();
    const Token& name = expect(Tok::ident, "after 'model'");
    if (have_model_name_) fail(kw, "the model name is given twice");
    have_model_name_ = true;
    m_.name = name.text;
  }

  void header_string() {
    const Token& kw = next();
    if (peek().kind != Tok::string)
      fail(peek(), "expected a \"quoted string\" after '" + kw.text + "'");
    std::string text = next().text;
    bool citation = kw.text == "citation";
    bool& seen = citation ? have_citation_ : have_description_;
    if (seen) fail(kw, "'" + kw.text + "' is given twice");
    seen = true;
    (citation ? m_.citation : m_.documentation) = std::move(text);
  }

  Symbol* time_decl() {
    const Token& kw = next();
    const Token& name = expect(Tok::ident, "after 'time'");
    if (have_time_) fail(kw, "the time variable is declared twice");
    have_time_ = true;
    check_name(name);
    m_.time = Symbol{};
    m_.time.name = name.text;
    m_.time.loc = loc(name);
    declare(name, VarKind::time, 0, "time");
    suffixes(m_.time);
    return &m_.time;
  }

  Symbol* value_decl() {
    const Token& kw = next();
    bool is_state = kw.text == "state";
    const Token& name = expect(Tok::ident, is_state ? "after 'state'" : "after 'param'");
    check_name(name);
    if (peek().kind != Tok::assign)
      fail(peek(), is_state ? "state '" + name.text + "' has no initial value: write state " +
                                  name.text + " = <number>"
                            : "param '" + name.text + "' has no value: write param " +
                                  name.text + " = <number>");
    next();
    double value = signed_number(name.text, is_state);
    if (is_state) {
      State s;
      s.name = name.text;
      s.loc = loc(name);
      s.initial = value;
      suffixes(s);
      declare(name, VarKind::state, static_cast<std::uint32_t>(m_.states.size()), "state");
      m_.states.push_back(std::move(s));
      return &m_.states.back();
    }
    Parameter p;
    p.name = name.text;
    p.loc = loc(name);
    p.value = value;
    suffixes(p);
    declare(name, VarKind::param, static_cast<std::uint32_t>(m_.parameters.size()), "param");
    m_.parameters.push_back(std::move(p));
    return &m_.parameters.back();
  }

  double signed_number(const std::string& name, bool is_state) {
    bool negative = false;
    if (peek().kind == Tok::minus || peek().kind == Tok::plus) negative = next().kind == Tok::minus;
    if (peek().kind != Tok::number) {
      if (is_word(peek(), "nan") || is_word(peek(), "NaN") || is_word(peek(), "inf"))
        fail(peek(), "'" + peek().text + "' is not a number; values must be finite");
      fail(peek(), std::string("the ") + (is_state ? "initial value of state '" : "value of param '") +
                       name + "' must be a number (define derived quantities as "
                       "name = expression)");
    }
    double v = next().value;
    return negative ? -v : v;
  }

  Symbol* algebraic() {
    const Token& name = next();
    check_name(name);
    next();  // '='
    skip_newlines();
    Algebraic a;
    a.name = name.text;
    a.loc = loc(name);
    a.expr = expr();
    suffixes(a);
    declare(name, VarKind::algebraic, static_cast<std::uint32_t>(m_.algebraics.size()),
            "algebraic variable");
    m_.algebraics.push_back(std::move(a));
    return &m_.algebraics.back();
  }

  void ode() {
    const Token& d = next();
    next();  // '/'
    next();  // 'dt'
    const Token& name = expect(Tok::ident, "after 'd/dt'");
    expect(Tok::assign, ("after 'd/dt " + name.text + "'").c_str());
    skip_newlines();
    ExprId e = expr();
    odes_.push_back({name.text, loc(d), e});
  }

  // Units in [brackets] and one @annotation, in either order, after a declaration.
  void suffixes(Symbol& s) {
    bool have_units = false, have_term = false;
    while (true) {
      const Token& t = peek();
      if (t.kind == Tok::units) {
        if (have_units) fail(t, "units are given twice");
        have_units = true;
        s.units_name = t.text;
        try {
          s.units = parse_units_expr(t.text);
        } catch (const std::exception& e) {
          sink_.error(loc(t), "unknown units [" + t.text + "]: " + e.what());
        }
        next();
      } else if (t.kind == Tok::annotation) {
        if (have_term) fail(t, "a symbol takes one @annotation");
        have_term = true;
        s.ontology = t.text;
        next();
      } else {
        return;
      }
    }
  }

  void check_name(const Token& name) {
    for (auto w : kReserved)
      if (name.text == w) fail(name, "'" + name.text + "' is a reserved word and cannot name a variable");
  }

  void declare(const Token& name, VarKind kind, std::uint32_t index, const char* what) {
    auto [it, inserted] = decls_.try_emplace(name.text, Decl{kind, index, loc(name), what});
    if (!inserted)
      fail(name, "'" + name.text + "' is already defined (as " + it->second.what + ") at " +
                     it->second.loc.str());
  }

  // ---- expressions --------------------------------------------------------------------
  struct DepthGuard {
    Parser& p;
    DepthGuard(Parser& parser, const Token& at) : p(parser) {
      if (++p.depth_ > kMaxDepth)
        p.fail(at, "expression nested too deeply (more than " + std::to_string(kMaxDepth) +
                       " levels)");
    }
    ~DepthGuard() { --p.depth_; }
  };

  ExprId expr() {
    DepthGuard guard(*this, peek());
    if (is_word(peek(), "if")) {
      next();
      skip_newlines();
      ExprId c = expr();
      if (!is_word(peek(), "then")) fail(peek(), "expected 'then' in 'if ... then ... else ...'");
      next();
      skip_newlines();
      ExprId a = expr();
      if (!is_word(peek(), "else")) fail(peek(), "expected 'else' in 'if ... then ... else ...'");
      next();
      skip_newlines();
      ExprId b = expr();
      return pool_.select(c, a, b);
    }
    return logic_or();
  }

  ExprId logic_or() {
    ExprId a = logic_xor();
    while (is_word(peek(), "or")) {
      next();
      skip_newlines();
      a = pool_.make(Op::logical_or, {a, logic_xor()});
    }
    return a;
  }
  ExprId logic_xor() {
    ExprId a = logic_and();
    while (is_word(peek(), "xor")) {
      next();
      skip_newlines();
      a = pool_.make(Op::logical_xor, {a, logic_and()});
    }
    return a;
  }
  ExprId logic_and() {
    ExprId a = logic_not();
    while (is_word(peek(), "and")) {
      next();
      skip_newlines();
      a = pool_.make(Op::logical_and, {a, logic_not()});
    }
    return a;
  }
  ExprId logic_not() {
    if (is_word(peek(), "not")) {
      DepthGuard guard(*this, peek());
      next();
      skip_newlines();
      return pool_.make(Op::logical_not, {logic_not()});
    }
    return comparison();
  }

  static bool comparison_op(Tok k, Op& op) {
    switch (k) {
      case Tok::lt: op = Op::lt; return true;
      case Tok::le: op = Op::le; return true;
      case Tok::gt: op = Op::gt; return true;
      case Tok::ge: op = Op::ge; return true;
      case Tok::eq: op = Op::eq; return true;
      case Tok::ne: op = Op::ne; return true;
      default: return false;
    }
  }

  ExprId comparison() {
    ExprId a = additive();
    Op op;
    if (!comparison_op(peek().kind, op)) return a;
    next();
    skip_newlines();
    ExprId b = additive();
    Op op2;
    if (comparison_op(peek().kind, op2))
      fail(peek(), "chained comparison; write a < b and b < c");
    return pool_.make(op, {a, b});
  }

  ExprId additive() {
    ExprId a = multiplicative();
    while (peek().kind == Tok::plus || peek().kind == Tok::minus) {
      Op op = next().kind == Tok::plus ? Op::add : Op::sub;
      skip_newlines();
      a = pool_.make(op, {a, multiplicative()});
    }
    return a;
  }

  ExprId multiplicative() {
    ExprId a = unary();
    while (peek().kind == Tok::star || peek().kind == Tok::slash) {
      Op op = next().kind == Tok::star ? Op::mul : Op::div;
      skip_newlines();
      a = pool_.make(op, {a, unary()});
    }
    return a;
  }

  // A minus sign directly on a number literal is part of the literal (-3 is the constant
  // -3), except before '^' where -2^2 means -(2^2).
  ExprId unary() {
    if (peek().kind == Tok::minus || peek().kind == Tok::plus) {
      DepthGuard guard(*this, peek());
      bool minus = next().kind == Tok::minus;
      if (minus && peek().kind == Tok::number && peek(1).kind != Tok::caret)
        return pool_.constant(-next().value);
      ExprId a = unary();
      return minus ? pool_.neg(a) : a;
    }
    return power();
  }

  ExprId power() {
    ExprId base = primary();
    if (peek().kind != Tok::caret) return base;
    DepthGuard guard(*this, peek());
    next();
    skip_newlines();
    return pool_.pow(base, unary());
  }

  ExprId primary() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::number:
        next();
        return pool_.constant(t.value);
      case Tok::lparen: {
        next();
        ExprId e = expr();
        if (peek().kind != Tok::rparen)
          fail(peek(), "expected ')' to close the '(' at " + std::to_string(t.line) + ":" +
                           std::to_string(t.col) + ", found " + found(peek()));
        next();
        return e;
      }
      case Tok::ident:
        break;
      default:
        fail(t, "expected an expression, found " + found(t));
    }
    for (auto w : kReserved)
      if (t.text == w) {
        if (w == "if") fail(t, "put 'if ... then ... else ...' in parentheses when it is an operand");
        fail(t, "expected an expression, found the reserved word '" + t.text + "'");
      }
    if (t.text == "nan" || t.text == "NaN" || t.text == "inf" || t.text == "Inf")
      if (!decls_.count(t.text) && peek(1).kind != Tok::lparen)
        fail(t, "'" + t.text + "' is not a number literal; numbers must be finite");
    next();
    if (peek().kind == Tok::lparen) return call(t);
    return placeholder(t);
  }

  ExprId call(const Token& name) {
    const Token& open = next();
    const FunctionInfo* f = find_function(name.text);
    if (!f) {
      std::vector<std::string> names;
      for (const auto& fi : kFunctions) names.emplace_back(fi.name);
      fail(name, "unknown function '" + name.text + "'" + did_you_mean(name.text, names));
    }
    std::vector<ExprId> args;
    if (peek().kind != Tok::rparen) {
      while (true) {
        args.push_back(expr());
        if (peek().kind == Tok::comma) {
          next();
          continue;
        }
        break;
      }
    }
    if (peek().kind != Tok::rparen)
      fail(peek(), "expected ',' or ')' in the call of " + name.text + "( at " +
                       std::to_string(open.line) + ":" + std::to_string(open.col) + ", found " +
                       found(peek()));
    next();
    if (f->arity >= 0 && static_cast<int>(args.size()) != f->arity)
      fail(name, std::string(f->name) + " takes " + std::to_string(f->arity) + " argument" +
                     (f->arity == 1 ? "" : "s") + ", got " + std::to_string(args.size()));
    if (f->op == Op::piecewise) {
      if (args.size() < 2)
        fail(name, "piecewise needs at least one condition and its value: "
                   "piecewise(cond1, value1, ..., otherwise)");
      if (args.size() % 2 == 0) args.push_back(pool_.constant(std::numeric_limits<double>::quiet_NaN()));
    }
    return pool_.make(f->op, std::move(args));
  }

  ExprId placeholder(const Token& name) {
    auto [it, inserted] = refs_.try_emplace(name.text, static_cast<std::uint32_t>(ref_names_.size()));
    if (inserted) {
      ref_names_.push_back(name.text);
      ref_locs_.push_back(loc(name));
    }
    return pool_.variable(VarKind::algebraic, kPlaceholder | it->second);
  }

  // ---- resolution ---------------------------------------------------------------------
  void finish() {
    if (!have_model_name_) m_.name = default_model_name();
    if (!have_time_) {
      m_.time.name = "t";
      if (!decls_.count("t")) decls_.emplace("t", Decl{VarKind::time, 0, {}, "time"});
    }
    // Each state gets exactly one equation.
    std::vector<int> ode_of(m_.states.size(), -1);
    for (std::size_t i = 0; i < odes_.size(); ++i) {
      const Ode& o = odes_[i];
      auto d = decls_.find(o.name);
      if (d == decls_.end() || d->second.kind != VarKind::state) {
        std::string what = d == decls_.end() ? "which is not defined"
                                             : std::string("which is a ") + d->second.what;
        std::string hint = d == decls_.end() ? did_you_mean(o.name, state_names()) : "";
        sink_.error(o.loc, "d/dt of '" + o.name + "', " + what + "; only a state has a "
                           "derivative (declare it with state " + o.name + " = <initial value>)" + hint);
        continue;
      }
      int& slot = ode_of[d->second.index];
      if (slot >= 0) {
        sink_.error(o.loc, "second equation for d/dt " + o.name + " (the first is at " +
                               odes_[slot].loc.str() + ")");
        continue;
      }
      slot = static_cast<int>(i);
    }
    for (std::size_t i = 0; i < m_.states.size(); ++i)
      if (ode_of[i] < 0)
        sink_.error(m_.states[i].loc, "state '" + m_.states[i].name + "' has no equation; add d/dt " +
                                          m_.states[i].name + " = <expression>");

    // Resolve every name once.
    std::vector<ExprId> resolved(ref_names_.size(), kNoExpr);
    std::vector<std::string> all_names;
    for (const auto& [n, d] : decls_) all_names.push_back(n);
    std::sort(all_names.begin(), all_names.end());
    for (std::size_t k = 0; k < ref_names_.size(); ++k) {
      if (error_count() > kMaxErrors) break;
      const std::string& n = ref_names_[k];
      auto d = decls_.find(n);
      if (d != decls_.end()) {
        resolved[k] = m_.pool.variable(d->second.kind, d->second.index);
      } else if (n == "pi") {
        resolved[k] = m_.pool.constant(std::numbers::pi);
      } else if (n == "e") {
        resolved[k] = m_.pool.constant(std::numbers::e);
      } else if (find_function(n)) {
        sink_.error(ref_locs_[k], "'" + n + "' is a function; call it as " + n + "(...)");
      } else {
        sink_.error(ref_locs_[k], "undefined name '" + n + "'" + did_you_mean(n, all_names));
      }
    }
    if (sink_.has_errors()) return;

    // Copy the reachable expressions into the model's pool, resolving placeholders.
    std::vector<ExprId> roots;
    for (const auto& a : m_.algebraics) roots.push_back(a.expr);
    for (const auto& o : odes_) roots.push_back(o.expr);
    std::unordered_map<ExprId, ExprId> map;
    std::vector<ExprId> args;
    for (ExprId id : topological_nodes(pool_, roots)) {
      const Node& n = pool_.node(id);
      ExprId out;
      if (n.op == Op::constant) {
        out = m_.pool.constant(n.value);
      } else if (n.op == Op::variable) {
        out = resolved[n.index & ~kPlaceholder];
      } else {
        args.clear();
        for (ExprId a : n.args) args.push_back(map.at(a));
        out = m_.pool.make(n.op, args);
      }
      map[id] = out;
    }
    for (auto& a : m_.algebraics) a.expr = map.at(a.expr);
    m_.derivatives.assign(m_.states.size(), kNoExpr);
    for (std::size_t i = 0; i < m_.states.size(); ++i)
      m_.derivatives[i] = map.at(odes_[ode_of[i]].expr);
  }

  std::vector<std::string> state_names() const {
    std::vector<std::string> v;
    for (const auto& s : m_.states) v.push_back(s.name);
    return v;
  }

  std::string default_model_name() const {
    std::string stem = file_;
    auto slash = stem.find_last_of("/\\");
    if (slash != std::string::npos) stem = stem.substr(slash + 1);
    auto dot = stem.find('.');
    if (dot != std::string::npos) stem = stem.substr(0, dot);
    for (char& c : stem)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    return stem.empty() ? "model" : stem;
  }

  static constexpr std::size_t kMaxErrors = 30;
  std::string file_;
  DiagnosticSink sink_;
  std::vector<Token> toks_;
  std::map<int, std::string> comments_;
  std::size_t pos_ = 0;
  int depth_ = 0;

  Model m_;
  ExprPool pool_;  // scratch: expressions with placeholder names
  bool have_model_name_ = false, have_time_ = false;
  bool have_citation_ = false, have_description_ = false;
  std::unordered_map<std::string, Decl> decls_;
  std::unordered_map<std::string, std::uint32_t> refs_;
  std::vector<std::string> ref_names_;
  std::vector<SourceLoc> ref_locs_;
  std::vector<Ode> odes_;
};

}  // namespace

bool is_hwm_reserved_word(std::string_view name) {
  for (auto w : kReserved)
    if (name == w) return true;
  return false;
}

Model parse_hwm(std::string_view text, const std::string& filename) {
  return Parser(text, filename).run();
}

Model load_hwm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLoc{path, 0, 0}, "cannot open model file");
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse_hwm(buf.str(), path);
}

}  // namespace hw::model
