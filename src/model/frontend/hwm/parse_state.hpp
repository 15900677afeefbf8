// What the .hwm parser (parser.cpp) has gathered when the tokens run out, and the
// resolution of its names (resolve.cpp): every placeholder named once, each state given its
// one equation, the expressions copied into the Model's own pool.
//
// Why two files: the parser reads a statement at a time and cannot know a name until every
// declaration is in; the resolution is a pass of its own over what it gathered, with its own
// messages (undefined names, states without an equation), and the parser stays a grammar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "model/frontend/hwm/hwm.hpp"

namespace hw::model::hwm {

// A name in a scratch expression before resolution: variable index kPlaceholder | k, k the
// name's place in ParseState::ref_names_.
inline constexpr std::uint32_t kPlaceholder = 0x80000000u;

struct FunctionInfo {
  std::string_view name;
  Op op;
  int arity;  // -1: piecewise
};
const FunctionInfo* find_function(std::string_view name);
std::vector<std::string> function_names();

// " (did you mean 'x'?)" for the closest candidate, or "" when none is close.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

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

// The parser's gathering.
struct ParseState {
  static constexpr std::size_t kMaxErrors = 30;
  std::size_t error_count() const { return sink_.all().size(); }

  std::string file_;
  DiagnosticSink sink_;
  Model m_;
  ExprPool pool_;  // scratch: expressions with placeholder names
  bool have_model_name_ = false, have_time_ = false;
  std::unordered_map<std::string, Decl> decls_;
  std::unordered_map<std::string, std::uint32_t> refs_;
  std::vector<std::string> ref_names_;
  std::vector<SourceLoc> ref_locs_;
  std::vector<Ode> odes_;
};

// Once every statement is read without errors: each state's one equation, every name
// resolved (a declaration, pi, e; else an error naming it, with the closest name), the
// reachable expressions copied into s.m_'s pool. Errors go to s.sink_.
void resolve(ParseState& s);

}  // namespace hw::model::hwm
