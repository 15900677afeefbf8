// Small hand-built models for the pass and interpreter tests.
#pragma once

#include <string>

#include "model/ir/model.hpp"

namespace hw::model::test {

struct Builder {
  Model m;
  ExprPool& p = m.pool;

  ExprId state(const std::string& name, double initial) {
    State s;
    s.name = name;
    s.initial = initial;
    s.loc = {"test.hwm", static_cast<int>(m.states.size()) + 1, 1};
    m.states.push_back(s);
    m.derivatives.push_back(kNoExpr);
    return p.state(static_cast<std::uint32_t>(m.states.size() - 1));
  }
  ExprId param(const std::string& name, double value) {
    Parameter q;
    q.name = name;
    q.value = value;
    m.parameters.push_back(q);
    return p.param(static_cast<std::uint32_t>(m.parameters.size() - 1));
  }
  // Declares an algebraic (definition may be set later with define()).
  ExprId alg(const std::string& name, ExprId expr = kNoExpr) {
    Algebraic a;
    a.name = name;
    a.expr = expr;
    a.loc = {"test.hwm", 100 + static_cast<int>(m.algebraics.size()), 5};
    m.algebraics.push_back(a);
    return p.algebraic(static_cast<std::uint32_t>(m.algebraics.size() - 1));
  }
  void define(ExprId var, ExprId expr) { m.algebraics[p.node(var).index].expr = expr; }
  void ode(ExprId state_var, ExprId expr) { m.derivatives[p.node(state_var).index] = expr; }
  ExprId c(double v) { return p.constant(v); }
};

}  // namespace hw::model::test
