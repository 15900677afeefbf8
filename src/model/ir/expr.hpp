// The expression DAG: hash-consed, immutable nodes with structural equality.
//
// Every node lives in an ExprPool and is named by an ExprId. make() returns the existing
// id when an equal node is already in the pool, so structurally equal subexpressions are
// the same id: equality is an integer compare and common-subexpression elimination is a
// use count. Nodes are never modified; passes build new nodes and new roots.
//
// Leaves are constants and variables. A variable names a symbol of the Model by kind and
// index: time, a state, a parameter or an algebraic variable (whose definition lives in
// the Model, not inlined, so generated code keeps the model's names).
//
// piecewise args are [cond1, value1, cond2, value2, ..., otherwise] (always odd; a model
// without "otherwise" gets NaN there). select args are [cond, if_true, if_false].
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/ir/ops.hpp"

namespace hw::model {

using ExprId = std::uint32_t;
inline constexpr ExprId kNoExpr = std::numeric_limits<ExprId>::max();

enum class VarKind : std::uint8_t { time, state, param, algebraic };

struct Node {
  Op op = Op::constant;
  VarKind var_kind = VarKind::time;  // for Op::variable
  std::uint32_t index = 0;           // for Op::variable: index into the Model's list
  double value = 0.0;                // for Op::constant
  std::vector<ExprId> args;
};

class ExprPool {
 public:
  ExprPool();
  // Copies and moves rebuild the hash index, whose hasher points at its own pool.
  ExprPool(const ExprPool& other);
  ExprPool(ExprPool&& other) noexcept;
  ExprPool& operator=(const ExprPool& other);
  ExprPool& operator=(ExprPool&& other) noexcept;

  const Node& node(ExprId id) const { return nodes_[id]; }
  Op op(ExprId id) const { return nodes_[id].op; }
  std::span<const ExprId> args(ExprId id) const { return nodes_[id].args; }
  std::size_t size() const { return nodes_.size(); }

  // Leaves.
  ExprId constant(double value);
  ExprId time() { return variable(VarKind::time, 0); }
  ExprId state(std::uint32_t i) { return variable(VarKind::state, i); }
  ExprId param(std::uint32_t i) { return variable(VarKind::param, i); }
  ExprId algebraic(std::uint32_t i) { return variable(VarKind::algebraic, i); }
  ExprId variable(VarKind kind, std::uint32_t index);

  // Interior nodes; checks the arity. Returns the existing id for an equal node.
  ExprId make(Op op, std::vector<ExprId> args);

  // Shorthands.
  ExprId add(ExprId a, ExprId b) { return make(Op::add, {a, b}); }
  ExprId sub(ExprId a, ExprId b) { return make(Op::sub, {a, b}); }
  ExprId mul(ExprId a, ExprId b) { return make(Op::mul, {a, b}); }
  ExprId div(ExprId a, ExprId b) { return make(Op::div, {a, b}); }
  ExprId neg(ExprId a) { return make(Op::neg, {a}); }
  ExprId pow(ExprId a, ExprId b) { return make(Op::pow, {a, b}); }
  ExprId call(Op op, ExprId a) { return make(op, {a}); }
  ExprId select(ExprId c, ExprId a, ExprId b) { return make(Op::select, {c, a, b}); }

  bool is_constant(ExprId id) const { return nodes_[id].op == Op::constant; }
  bool is_constant(ExprId id, double v) const {
    return is_constant(id) && nodes_[id].value == v;
  }
  bool is_variable(ExprId id, VarKind kind) const {
    return nodes_[id].op == Op::variable && nodes_[id].var_kind == kind;
  }

 private:
  struct KeyHash {
    const ExprPool* pool;
    std::size_t operator()(ExprId id) const;
  };
  struct KeyEq {
    const ExprPool* pool;
    bool operator()(ExprId a, ExprId b) const;
  };
  ExprId intern(Node n);

  std::vector<Node> nodes_;
  std::unordered_map<ExprId, ExprId, KeyHash, KeyEq> index_;
};

// Post-order rewrite with memoisation: visits each distinct node under `roots` once,
// children first. `rebuild(id, new_args)` returns the replacement of node `id` given its
// already-rewritten arguments (new_args is empty for leaves). Returns the new roots.
std::vector<ExprId> rewrite(ExprPool& pool, std::span<const ExprId> roots,
                            const std::function<ExprId(ExprId, std::vector<ExprId>&)>& rebuild);

// The same node kind with new arguments (the identity rebuild for rewrite()).
ExprId rebuild_with(ExprPool& pool, ExprId id, std::vector<ExprId>& new_args);

// Every distinct node reachable from the roots, children before parents.
std::vector<ExprId> topological_nodes(const ExprPool& pool, std::span<const ExprId> roots);

// True when `target` occurs in the expression `root` (without looking through algebraics).
bool occurs(const ExprPool& pool, ExprId root, ExprId target);

}  // namespace hw::model
