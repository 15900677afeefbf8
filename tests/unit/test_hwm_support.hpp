// Helpers shared by the .hwm tests: a structural comparison of two Models (each with its
// own ExprPool) and a tiny tree-walk evaluator, kept here so that these tests do not
// depend on the interpreter they are meant to feed.
#pragma once

#include "test_cellml_eval.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/ir/model.hpp"
#include "model/ir/print.hpp"

namespace hwm_test {

using namespace hw::model;

// Same tree shape, ops, variables and constants (NaNs compare equal to NaNs).
inline bool same_tree(const Model& a, ExprId x, const Model& b, ExprId y) {
  std::vector<std::pair<ExprId, ExprId>> work{{x, y}};
  while (!work.empty()) {
    auto [i, j] = work.back();
    work.pop_back();
    const Node& n = a.pool.node(i);
    const Node& m = b.pool.node(j);
    if (n.op != m.op || n.args.size() != m.args.size()) return false;
    if (n.op == Op::constant) {
      bool both_nan = std::isnan(n.value) && std::isnan(m.value);
      if (!both_nan && std::bit_cast<std::uint64_t>(n.value) != std::bit_cast<std::uint64_t>(m.value))
        return false;
    }
    if (n.op == Op::variable && (n.var_kind != m.var_kind || n.index != m.index)) return false;
    for (std::size_t k = 0; k < n.args.size(); ++k) work.push_back({n.args[k], m.args[k]});
  }
  return true;
}

inline void expect_same_symbol(const Symbol& a, const Symbol& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.units_name, b.units_name) << a.name;
  EXPECT_EQ(a.ontology, b.ontology) << a.name;
}

inline void expect_same_model(const Model& a, const Model& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.citation, b.citation);
  expect_same_symbol(a.time, b.time);
  ASSERT_EQ(a.states.size(), b.states.size());
  ASSERT_EQ(a.parameters.size(), b.parameters.size());
  ASSERT_EQ(a.algebraics.size(), b.algebraics.size());
  ASSERT_EQ(a.derivatives.size(), b.derivatives.size());
  for (std::size_t i = 0; i < a.states.size(); ++i) {
    expect_same_symbol(a.states[i], b.states[i]);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(a.states[i].initial),
              std::bit_cast<std::uint64_t>(b.states[i].initial)) << a.states[i].name;
  }
  for (std::size_t i = 0; i < a.parameters.size(); ++i) {
    expect_same_symbol(a.parameters[i], b.parameters[i]);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(a.parameters[i].value),
              std::bit_cast<std::uint64_t>(b.parameters[i].value)) << a.parameters[i].name;
  }
  for (std::size_t i = 0; i < a.algebraics.size(); ++i) {
    expect_same_symbol(a.algebraics[i], b.algebraics[i]);
    EXPECT_TRUE(same_tree(a, a.algebraics[i].expr, b, b.algebraics[i].expr))
        << a.algebraics[i].name << ": " << to_infix(a, a.algebraics[i].expr) << "\n vs "
        << to_infix(b, b.algebraics[i].expr);
  }
  for (std::size_t i = 0; i < a.derivatives.size(); ++i)
    EXPECT_TRUE(same_tree(a, a.derivatives[i], b, b.derivatives[i]))
        << "d/dt " << a.states[i].name << ": " << to_infix(a, a.derivatives[i]) << "\n vs "
        << to_infix(b, b.derivatives[i]);
}

inline std::vector<double> derivatives(const Model& m, double t, const std::vector<double>& y) {
  // The tests' own tree walk (shared with the CellML tests), not the project's evaluator.
  hw::model::testing::TinyEval ev(m, y, t);
  std::vector<double> dy;
  for (std::size_t i = 0; i < m.derivatives.size(); ++i) dy.push_back(ev.derivative(i));
  return dy;
}

}  // namespace hwm_test
