// See op_count.hpp.
#include "model/emit/op_count.hpp"

#include <cstdlib>
#include <unordered_set>

#include <fmt/format.h>

#include "model/emit/block_solver.hpp"
#include "model/emit/printer_common.hpp"

namespace hw::model {

double OpCount::special_calls() const {
  double n = 0;
  for (const auto& [name, k] : specials) n += k;
  return n;
}

std::string OpCount::str() const {
  std::string s = fmt::format("{:.0f} flops, {:.0f} div (by {:.0f} distinct divisors), {:.0f} div by literal, "
                              "{:.0f} select", flops, divisions, distinct_divisors, constant_divisions, selects);
  std::string sp;
  for (const auto& [name, k] : specials) sp += fmt::format("{}{} {:.0f}", sp.empty() ? "; " : ", ", name, k);
  return s + sp;
}

namespace {

OpCount& operator+=(OpCount& a, const OpCount& b) {
  a.flops += b.flops;
  a.divisions += b.divisions;
  a.distinct_divisors += b.distinct_divisors;
  a.constant_divisions += b.constant_divisions;
  a.selects += b.selects;
  for (const auto& [name, k] : b.specials) a.specials[name] += k;
  return a;
}

OpCount times(OpCount a, double k) {
  a.flops *= k;
  a.divisions *= k;
  a.distinct_divisors *= k;
  a.constant_divisions *= k;
  a.selects *= k;
  for (auto& [name, v] : a.specials) v *= k;
  return a;
}

// Multiplications of powi<n> (cpp_printer.cpp's template): squaring for even n, one more
// multiplication for odd n; a negative n adds one division.
int powi_multiplications(int n) {
  n = std::abs(n);
  if (n <= 1) return 0;
  return powi_multiplications(n % 2 == 0 ? n / 2 : n - 1) + 1;
}

// One function's statements: every node reachable from them, once.
OpCount count_statements(const Model& m, const std::vector<Assignment>& stmts) {
  const ExprPool& pool = m.pool;
  OpCount c;
  std::unordered_set<ExprId> seen, divisors;
  std::vector<ExprId> stack;
  for (const Assignment& s : stmts)
    if (s.expr != kNoExpr) stack.push_back(s.expr);
  while (!stack.empty()) {
    const ExprId e = stack.back();
    stack.pop_back();
    if (!seen.insert(e).second) continue;
    const Node& n = pool.node(e);
    bool visit_args = true;
    switch (n.op) {
      case Op::constant:
      case Op::variable: break;
      case Op::add: case Op::sub: case Op::mul: case Op::neg: case Op::abs: case Op::floor:
      case Op::ceil: case Op::min: case Op::max:
        c.flops += 1;
        break;
      case Op::div:
        if (!pool.is_constant(n.args[1])) {
          c.divisions += 1;
          if (divisors.insert(n.args[1]).second) c.distinct_divisors += 1;
        }
        else if (exact_reciprocal(pool.node(n.args[1]).value))
          c.flops += 1;
        else
          c.constant_divisions += 1;
        break;
      case Op::pow:
        if (auto k = small_integer_exponent(pool, n.args[1])) {
          c.flops += powi_multiplications(*k);
          if (*k < 0) c.divisions += 1;
          if (*k == 0) visit_args = false;
        } else if (pool.is_constant(n.args[1], 0.5)) {
          c.specials["sqrt"] += 1;
        } else {
          c.specials["pow"] += 1;
        }
        break;
      case Op::rem: c.specials["fmod"] += 1; break;
      case Op::lt: case Op::le: case Op::gt: case Op::ge: case Op::eq: case Op::ne:
      case Op::logical_and: case Op::logical_or: case Op::logical_xor: case Op::logical_not:
      case Op::select:
        c.selects += 1;
        break;
      case Op::piecewise: break;  // lowered to select before printing
      default: c.specials[std::string(op_info(n.op).spelling)] += 1; break;  // exp, log, tanh, ...
    }
    if (visit_args)
      for (ExprId a : n.args) stack.push_back(a);
  }
  return c;
}

// detail::expm1_over of runtime/integrators.hpp: x = J·h, the series and the quotient, one chosen.
OpCount expm1_over() {
  OpCount c;
  c.flops = 9;  // J·h, the 3-term series (5), 0·e and its add, |x|
  c.divisions = 1;
  c.distinct_divisors = 1;
  c.selects = 2;
  c.specials["expm1"] = 1;
  return c;
}

OpCount flops(double n) {
  OpCount c;
  c.flops = n;
  return c;
}

// factor_blocks + the number of solve_blocks and block_axpy calls of one step, as the
// printers emit them: over each block's nonzeros and fill (model/emit/block_solver.hpp).
OpCount block_work(const Model& m, int solves, int axpys) {
  const BlockWork w = block_work_of(block_patterns(m));
  OpCount c;
  c.flops = w.factor_flops + solves * w.solve_flops + axpys * w.axpy_flops;
  c.divisions = w.factor_divisions + solves * w.solve_divisions;
  c.distinct_divisors = w.factor_divisions;  // the solves divide by the same pivots
  return c;
}

}  // namespace

std::string FastIntrinsicCount::str() const {
  return fmt::format("{} exp → __expf, {} log → __logf/__log10f, {} pow → __powf, {} divisions → __fdividef", exp, log,
                     pow, div);
}

FastIntrinsicCount count_fast_intrinsics(const Model& m) {
  const CodeLayout layout = make_layout(m);
  const TargetProfile prof = cuda_profile(true, true, "powi");
  std::vector<Assignment> narrow;
  for (Assignment& a : rhs_statements(m, layout, prof, true))
    if (!a.wide) narrow.push_back(std::move(a));
  OpCount c = count_statements(m, narrow);
  const auto calls = [&](const char* name) { return int(c.specials[name]); };
  return {.exp = calls("exp"),
          .log = calls("log") + calls("log10"),
          .pow = calls("pow"),
          .div = int(c.divisions + c.constant_divisions)};
}

OpCount count_operations(const Model& m, cell::Integrator method) {
  const CodeLayout layout = make_layout(m);
  const TargetProfile prof = cuda_profile(true, false, "powi");
  const OpCount rhs = count_statements(m, rhs_statements(m, layout, prof, false));
  const OpCount rhs_jac = count_statements(m, rhs_statements(m, layout, prof, true));
  const OpCount rhs_blocks = m.blocks.empty() ? rhs_jac : count_statements(m, rhs_blocks_statements(m, layout, prof));
  double n = double(m.states.size()), gates = 0, in_blocks = 0;
  for (const StateAnalysis& a : m.analysis) {
    gates += a.is_gate ? 1 : 0;
    in_blocks += a.block >= 0 ? 1 : 0;
  }
  const OpCount finite = [&] {
    OpCount c;
    c.flops = n;
    c.selects = 2 * n;
    return c;
  }();
  using cell::Integrator;
  OpCount c;
  switch (method) {
    case Integrator::fe: c = rhs; c += flops(2 * n); break;
    case Integrator::rk2: c = times(rhs, 2); c += flops(4 * n); break;
    case Integrator::rk4: c = times(rhs, 4); c += flops(13 * n); break;
    case Integrator::rl1:
      c = rhs_jac;
      c += times(expm1_over(), gates);
      c += flops(2 * n);
      break;
    case Integrator::rl2:
      c = times(rhs_jac, 2);
      c += times(expm1_over(), 2 * gates);
      c += flops(4 * n + 3 * gates);
      break;
    case Integrator::sbe:
      c = rhs_jac;
      c += finite;
      c += flops(4 * n);
      c.divisions += n;
      c.distinct_divisors += n;
      break;
    case Integrator::grl1:
      c = rhs_blocks;
      c += finite;
      c += times(expm1_over(), n - in_blocks);
      c += flops(2 * n + (m.blocks.empty() ? 0 : 2 * n));
      if (!m.blocks.empty()) c += block_work(m, 1, 0);
      break;
    case Integrator::grl2:
      c = times(rhs_blocks, 2);
      c += times(finite, 2);
      c += times(expm1_over(), 2 * (n - in_blocks));  // the half step and the full step
      c += flops(2 * n + 5 * (n - in_blocks));
      if (!m.blocks.empty()) {
        c += block_work(m, 1, 0);  // the half step's backward Euler
        c += block_work(m, 2, 2);  // SDIRK: one LU, two solves, two products
        c += flops(3 * n + 5 * in_blocks);
      }
      break;
  }
  // A step that crosses no threshold evaluates the distances at its start and its end
  // (runtime/integrators.hpp, step_to_thresholds); the rare steps that stop cost more.
  if (!m.thresholds.empty()) c += times(count_statements(m, threshold_statements(m, layout, prof)), 2);
  return c;
}

}  // namespace hw::model
