// See fused_step.hpp.
#include "model/emit/fused_step.hpp"

#include <algorithm>
#include <span>
#include <sstream>

#include "model/emit/block_solver.hpp"
#include "model/emit/identifiers.hpp"
#include "model/passes/util.hpp"

namespace hw::model {

namespace {

enum class Scheme { fe, rl1, grl1 };

// Builds one fused step's statements: each state's algebraics where first needed.
class Schedule {
 public:
  Schedule(const Model& m, const CodeLayout& l, const TargetProfile& prof, const VarNamer& names)
      : m_(m), l_(l), prof_(prof), names_(names), printed_(m.algebraics.size(), 0) {}

  // The every-step algebraics that e reads, directly or through others, not yet printed,
  // in the model's order (each reads only earlier ones).
  void need(ExprId e) {
    std::vector<std::uint32_t> stack = algebraic_refs(m_.pool, e), found;
    while (!stack.empty()) {
      const std::uint32_t k = stack.back();
      stack.pop_back();
      if (l_.constant_index[k] >= 0 || printed_[k]) continue;
      printed_[k] = 1;
      found.push_back(k);
      for (std::uint32_t r : algebraic_refs(m_.pool, m_.algebraics[k].expr)) stack.push_back(r);
    }
    std::sort(found.begin(), found.end());
    for (std::uint32_t k : found) out.push_back(every_step_algebraic(m_, l_, prof_, k));
  }

  void define(const std::string& name, ExprId e, std::string comment = "") {
    out.push_back({"const " + prof_.real + " " + name, e, "", std::move(comment)});
  }
  void text(const std::string& lhs, const std::string& rhs) { out.push_back({lhs, kNoExpr, rhs, ""}); }
  void raw(const std::string& lines) { out.push_back({"", kNoExpr, lines, ""}); }

  std::string y(std::uint32_t i) const { return names_(VarKind::state, i); }
  std::string derivative_comment(std::uint32_t i) const {
    return "d/dt " + sanitise_comment(m_.states[i].name, 60);
  }

  std::vector<Assignment> out;

 private:
  const Model& m_;
  const CodeLayout& l_;
  const TargetProfile& prof_;
  const VarNamer& names_;
  std::vector<std::uint8_t> printed_;
};

std::string index_name(const char* stem, std::uint32_t i) { return std::string(stem).append(std::to_string(i)); }

// A unit of the fused step: one state, or a linear block of states updated together.
struct Unit {
  std::vector<std::uint32_t> states;
  int block = -1;
  std::vector<ExprId> roots;  // what its update reads: derivatives, diagonals, block entries
};

std::vector<Unit> units_of(const Model& m, Scheme scheme) {
  std::vector<Unit> units;
  std::vector<int> block_of(m.states.size(), -1);
  if (scheme == Scheme::grl1)
    for (std::size_t b = 0; b < m.blocks.size(); ++b)
      for (std::uint32_t i : m.blocks[b].states) block_of[i] = int(b);
  std::vector<std::uint8_t> block_seen(m.blocks.size(), 0);
  for (std::uint32_t i = 0; i < m.states.size(); ++i) {
    Unit u;
    if (const int b = block_of[i]; b >= 0) {
      if (block_seen[b]) continue;
      block_seen[b] = 1;
      u.block = b;
      u.states = m.blocks[b].states;
      for (std::uint32_t r : u.states) u.roots.push_back(m.derivatives[r]);
      for (ExprId e : m.blocks[b].jacobian) u.roots.push_back(e);
    } else {
      u.states = {i};
      u.roots.push_back(m.derivatives[i]);
      if (scheme == Scheme::grl1 || (scheme == Scheme::rl1 && m.analysis[i].is_gate))
        u.roots.push_back(m.analysis[i].jacobian_diag);
    }
    units.push_back(std::move(u));
  }
  return units;
}

// The order of the units that keeps the fewest values live, chosen greedily: next, the unit
// whose printing (its algebraics not yet printed, its new values) adds the fewest live values
// net of those it is the last to read (algebraics, and old states whose readers are all
// printed then). Ties go to the model's order. Live values are what a GPU thread must hold
// in registers; the order changes no result.
std::vector<std::size_t> greedy_order(const Model& m, const CodeLayout& l, const std::vector<Unit>& units) {
  const std::size_t na = m.algebraics.size(), ns = m.states.size();
  // Values: algebraic k is k, the old value of state i is na + i. Direct reads of each
  // every-step algebraic and of each unit.
  const auto direct = [&](std::span<const ExprId> roots) {
    std::vector<std::size_t> out;
    for (ExprId id : topological_nodes(m.pool, roots)) {
      const Node& n = m.pool.node(id);
      if (n.op != Op::variable) continue;
      if (n.var_kind == VarKind::algebraic && l.constant_index[n.index] < 0) out.push_back(n.index);
      if (n.var_kind == VarKind::state) out.push_back(na + n.index);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  std::vector<std::vector<std::size_t>> alg_reads(na), unit_reads(units.size());
  for (std::size_t k = 0; k < na; ++k)
    if (l.constant_index[k] < 0) alg_reads[k] = direct(std::span<const ExprId>(&m.algebraics[k].expr, 1));
  for (std::size_t u = 0; u < units.size(); ++u) unit_reads[u] = direct(units[u].roots);
  // Closure per unit: every every-step algebraic it needs.
  std::vector<std::vector<std::size_t>> closure(units.size());
  std::vector<std::uint8_t> needed(na, 0);
  for (std::size_t u = 0; u < units.size(); ++u) {
    std::vector<std::uint8_t> in(na, 0);
    std::vector<std::size_t> stack;
    for (std::size_t v : unit_reads[u]) if (v < na) stack.push_back(v);
    while (!stack.empty()) {
      const std::size_t k = stack.back();
      stack.pop_back();
      if (in[k]) continue;
      in[k] = 1;
      closure[u].push_back(k);
      for (std::size_t v : alg_reads[k]) if (v < na) stack.push_back(v);
    }
    for (std::size_t k : closure[u]) needed[k] = 1;
  }
  std::vector<int> uses(na + ns, 0);  // readers not yet printed
  for (std::size_t k = 0; k < na; ++k)
    if (needed[k]) for (std::size_t v : alg_reads[k]) ++uses[v];
  for (std::size_t u = 0; u < units.size(); ++u) for (std::size_t v : unit_reads[u]) ++uses[v];

  std::vector<std::uint8_t> printed(na, 0), unit_done(units.size(), 0);
  std::vector<std::size_t> order;
  std::vector<int> scratch(na + ns, 0);
  for (std::size_t step = 0; step < units.size(); ++step) {
    long best_score = 0;
    std::size_t best = units.size();
    for (std::size_t u = 0; u < units.size(); ++u) {
      if (unit_done[u]) continue;
      long score = long(units[u].states.size());
      std::vector<std::size_t> touched;
      const auto read = [&](std::size_t v) {
        if (scratch[v] == 0) touched.push_back(v);
        ++scratch[v];
      };
      for (std::size_t k : closure[u])
        if (!printed[k]) {
          ++score;
          for (std::size_t v : alg_reads[k]) read(v);
        }
      for (std::size_t v : unit_reads[u]) read(v);
      for (std::size_t v : touched) {
        if (uses[v] == scratch[v]) --score;  // its last reader
        scratch[v] = 0;
      }
      if (best == units.size() || score < best_score) best = u, best_score = score;
    }
    unit_done[best] = 1;
    order.push_back(best);
    for (std::size_t k : closure[best])
      if (!printed[k]) {
        printed[k] = 1;
        for (std::size_t v : alg_reads[k]) --uses[v];
      }
    for (std::size_t v : unit_reads[best]) --uses[v];
  }
  return order;
}

std::vector<Assignment> fused_statements(const Model& m, const CodeLayout& l, const TargetProfile& prof,
                                         const VarNamer& names, Scheme scheme, const std::string& indent) {
  Schedule s(m, l, prof, names);
  const std::string& real = prof.real;
  const std::string detail = "hw::cell::detail::";
  const std::vector<Unit> units = units_of(m, scheme);
  std::vector<BlockPattern> patterns;
  if (scheme == Scheme::grl1 && !m.blocks.empty()) {
    patterns = block_patterns(m);
    s.raw(indent + real + " A[kBlockEntries], lu[kBlockEntries], x[kStates];\n" + indent + "const " + real +
          " h = dt;\n");
  }
  for (std::size_t u : greedy_order(m, l, units)) {
    const Unit& unit = units[u];
    for (ExprId e : unit.roots) s.need(e);
    if (unit.block >= 0) {
      // GRL1's linearly implicit Euler step of the whole block, as grl1_update takes it.
      const LinearBlock& blk = m.blocks[unit.block];
      for (std::uint32_t r : blk.states) {
        s.define(index_name("f", r), m.derivatives[r], s.derivative_comment(r));
        s.text("x[" + std::to_string(r) + "]", "dt * " + index_name("f", r));
      }
      const BlockPattern& p = patterns[unit.block];
      for (std::size_t k = 0; k < blk.jacobian.size(); ++k)
        if (p.a_nonzero[k]) s.out.push_back({"A[" + std::to_string(p.offset + int(k)) + "]", blk.jacobian[k], "", ""});
      s.raw(print_block_factor_solve(p, unit.block, real, indent.substr(0, indent.size() >= 2 ? indent.size() - 2 : 0)));
      for (std::uint32_t r : blk.states)
        s.text("const " + real + " " + index_name("n", r), s.y(r) + " + x[" + std::to_string(r) + "]");
      continue;
    }
    const std::uint32_t i = unit.states[0];
    const std::string f = index_name("f", i), j = index_name("j", i), n = index_name("n", i);
    s.define(f, m.derivatives[i], s.derivative_comment(i));
    if (unit.roots.size() == 1) {
      s.text("const " + real + " " + n, s.y(i) + " + dt * " + f);
      continue;
    }
    s.define(j, m.analysis[i].jacobian_diag);
    const std::string diagonal = scheme == Scheme::grl1 ? detail + "finite_or_zero(" + j + ")" : j;
    s.text("const " + real + " " + n, s.y(i) + " + " + f + " * " + detail + "expm1_over(" + diagonal + ", dt)");
  }
  for (std::uint32_t i = 0; i < m.states.size(); ++i) s.text(s.y(i), index_name("n", i));
  return std::move(s.out);
}

}  // namespace

std::string print_fused_steps(const Model& m, const CodeLayout& l, const TargetProfile& prof,
                              const VarNamer& names, const std::string& qualifier,
                              const std::string& indent) {
  std::ostringstream o;
  const std::string& real = prof.real;
  const std::string body = indent + "  ";
  o << indent << "// The single-stage steps printed state by state (model/emit/fused_step.hpp):\n"
    << indent << "// step_once calls these instead of rhs_jac and its loops.\n"
    << indent << "static constexpr bool kFusedSteps = true;\n";
  const std::pair<const char*, Scheme> schemes[] = {{"fe", Scheme::fe}, {"rl1", Scheme::rl1}, {"grl1", Scheme::grl1}};
  for (const auto& [name, scheme] : schemes) {
    o << indent << qualifier << "void " << name << "_fused([[maybe_unused]] " << real << " t, " << real << " dt, "
      << real << "* y, [[maybe_unused]] const " << real << "* p, [[maybe_unused]] const " << real
      << "* c) const {\n"
      << print_straight_line(m, prof, fused_statements(m, l, prof, names, scheme, body), names, body) << indent
      << "}\n";
  }
  return o.str();
}

}  // namespace hw::model
