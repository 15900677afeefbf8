// The resolution of a .hwm file's names once it is read (parse_state.hpp), and the names
// both passes know: the functions, and the closest name for a "did you mean".
#include <algorithm>
#include <cctype>
#include <limits>
#include <numbers>
#include <unordered_map>

#include "core/suggest.hpp"
#include "model/ir/expr.hpp"
#include "model/frontend/hwm/parse_state.hpp"

namespace hw::model::hwm {

namespace {

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

std::vector<std::string> state_names(const ParseState& s) {
  std::vector<std::string> v;
  for (const auto& s : s.m_.states) v.push_back(s.name);
  return v;
}

std::string default_model_name(const ParseState& s) {
  std::string stem = s.file_;
  auto slash = stem.find_last_of("/\\");
  if (slash != std::string::npos) stem = stem.substr(slash + 1);
  auto dot = stem.find('.');
  if (dot != std::string::npos) stem = stem.substr(0, dot);
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return stem.empty() ? "model" : stem;
}

}  // namespace

const FunctionInfo* find_function(std::string_view name) {
  for (const auto& f : kFunctions)
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> function_names() {
  std::vector<std::string> names;
  for (const auto& f : kFunctions) names.emplace_back(f.name);
  return names;
}

// " (did you mean 'x'?)" for the closest candidate, or "" when none is close (core/suggest).
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  return hw::did_you_mean(name, candidates);
}

void resolve(ParseState& s) {
  if (!s.have_model_name_) s.m_.name = default_model_name(s);
  if (!s.have_time_) {
    // Undeclared time is "t", unless the model names something else t: then the first free
    // of t_1, t_2, ..., so that write_hwm's "time NAME" line never collides with a
    // declaration (found by fuzz_hwm's round trip).
    std::string name = "t";
    for (int k = 1; s.decls_.count(name); ++k) name = "t_" + std::to_string(k);
    s.m_.time.name = name;
    s.decls_.emplace(name, Decl{VarKind::time, 0, {}, "time"});
  }
  // Each state gets exactly one equation.
  std::vector<int> ode_of(s.m_.states.size(), -1);
  for (std::size_t i = 0; i < s.odes_.size(); ++i) {
    const Ode& o = s.odes_[i];
    auto d = s.decls_.find(o.name);
    if (d == s.decls_.end() || d->second.kind != VarKind::state) {
      std::string what = d == s.decls_.end() ? "which is not defined"
                                           : std::string("which is a ") + d->second.what;
      std::string hint = d == s.decls_.end() ? did_you_mean(o.name, state_names(s)) : "";
      s.sink_.error(o.loc, "d/dt of '" + o.name + "', " + what + "; only a state has a "
                         "derivative (declare it with state " + o.name + " = <initial value>)" + hint);
      continue;
    }
    int& slot = ode_of[d->second.index];
    if (slot >= 0) {
      s.sink_.error(o.loc, "second equation for d/dt " + o.name + " (the first is at " +
                             s.odes_[slot].loc.str() + ")");
      continue;
    }
    slot = static_cast<int>(i);
  }
  for (std::size_t i = 0; i < s.m_.states.size(); ++i)
    if (ode_of[i] < 0)
      s.sink_.error(s.m_.states[i].loc, "state '" + s.m_.states[i].name + "' has no equation; add d/dt " +
                                        s.m_.states[i].name + " = <expression>");

  // Resolve every name once.
  std::vector<ExprId> resolved(s.ref_names_.size(), kNoExpr);
  std::vector<std::string> all_names;
  for (const auto& [n, d] : s.decls_) all_names.push_back(n);
  std::sort(all_names.begin(), all_names.end());
  for (std::size_t k = 0; k < s.ref_names_.size(); ++k) {
    if (s.error_count() > ParseState::kMaxErrors) break;
    const std::string& n = s.ref_names_[k];
    auto d = s.decls_.find(n);
    if (d != s.decls_.end()) {
      resolved[k] = s.m_.pool.variable(d->second.kind, d->second.index);
    } else if (n == "pi") {
      resolved[k] = s.m_.pool.constant(std::numbers::pi);
    } else if (n == "e") {
      resolved[k] = s.m_.pool.constant(std::numbers::e);
    } else if (find_function(n)) {
      s.sink_.error(s.ref_locs_[k], "'" + n + "' is a function; call it as " + n + "(...)");
    } else {
      s.sink_.error(s.ref_locs_[k], "undefined name '" + n + "'" + did_you_mean(n, all_names));
    }
  }
  if (s.sink_.has_errors()) return;

  // Copy the reachable expressions into the model's pool, resolving placeholders.
  std::vector<ExprId> roots;
  for (const auto& a : s.m_.algebraics) roots.push_back(a.expr);
  for (const auto& o : s.odes_) roots.push_back(o.expr);
  std::unordered_map<ExprId, ExprId> map;
  std::vector<ExprId> args;
  for (ExprId id : topological_nodes(s.pool_, roots)) {
    const Node& n = s.pool_.node(id);
    ExprId out;
    if (n.op == Op::constant) {
      out = s.m_.pool.constant(n.value);
    } else if (n.op == Op::variable) {
      out = resolved[n.index & ~kPlaceholder];
    } else {
      args.clear();
      for (ExprId a : n.args) args.push_back(map.at(a));
      out = s.m_.pool.make(n.op, args);
    }
    map[id] = out;
  }
  for (auto& a : s.m_.algebraics) a.expr = map.at(a.expr);
  s.m_.derivatives.assign(s.m_.states.size(), kNoExpr);
  for (std::size_t i = 0; i < s.m_.states.size(); ++i)
    s.m_.derivatives[i] = map.at(s.odes_[ode_of[i]].expr);
}

}  // namespace hw::model::hwm
