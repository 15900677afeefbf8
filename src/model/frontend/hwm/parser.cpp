// Parser of the .hwm language (grammar and rules: docs/model-language.md).
//
// One pass over the tokens builds expressions straight into a scratch ExprPool, with every
// name as a placeholder variable; once all declarations are known (algebraics, and even
// parameters, may be used before they are declared) the placeholders are resolved and
// the expressions are copied into the Model's own pool, so the Model never holds a
// placeholder. Syntax errors skip to the next line so that one run reports many problems;
// recursion is bounded (kMaxDepth) so hostile input cannot exhaust the stack. The names are
// resolved by resolve.cpp, over what this gathered (parse_state.hpp).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <numbers>
#include <sstream>
#include <unordered_map>

#include "model/frontend/hwm/hwm.hpp"
#include "model/frontend/hwm/lexer.hpp"
#include "model/frontend/hwm/parse_state.hpp"
#include "model/ir/units.hpp"

namespace hw::model {

namespace {

using hwm::Decl;
using hwm::did_you_mean;
using hwm::find_function;
using hwm::FunctionInfo;
using hwm::function_names;
using hwm::kPlaceholder;
using hwm::Ode;
using hwm::ParseState;
using hwm::Tok;
using hwm::Token;

constexpr int kMaxDepth = 256;

constexpr std::string_view kReserved[] = {"and", "or", "not", "xor", "if", "then", "else"};

// Thrown after a syntax error has been recorded; the statement loop skips to the next line.
struct SyntaxAbort {};

// The tokens and a place among them, with the grammar's error reporting: a failed
// expectation records its message and aborts the statement (SyntaxAbort).
class Cursor {
 protected:
  Cursor(const std::string& path, DiagnosticSink& diag) : path_(path), diag_(diag) {}

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
  SourceLoc loc(const Token& t) const { return {path_, t.line, t.col}; }

  [[noreturn]] void fail(const Token& t, const std::string& msg) {
    diag_.error(loc(t), msg);
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

  std::vector<Token> toks_;
  std::size_t pos_ = 0;

 private:
  const std::string& path_;
  DiagnosticSink& diag_;
};

// Private bases: the grammar reads through the cursor and fills the state it resolves
// (parse_state.hpp).
class Parser : ParseState, Cursor {
 public:
  Parser(std::string_view text, const std::string& file) : Cursor(file_, sink_) {
    file_ = file;
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
    if (!sink_.has_errors()) resolve(*this);
    sink_.throw_if_errors();
    return std::move(m_);
  }

 private:

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
      fail(name, "unknown function '" + name.text + "'" + did_you_mean(name.text, function_names()));
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

  std::map<int, std::string> comments_;
  int depth_ = 0;
  bool have_citation_ = false, have_description_ = false;
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
