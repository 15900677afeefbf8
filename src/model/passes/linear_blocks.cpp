#include "model/passes/linear_blocks.hpp"

#include <algorithm>
#include <functional>
#include <cmath>
#include <numeric>
#include <random>

#include "model/passes/derivative.hpp"
#include "model/passes/eval.hpp"
#include "model/passes/fold_constants.hpp"
#include "model/passes/util.hpp"

namespace hw::model {

namespace {

// A partial ∂f_i/∂y_j that is not identically zero, and the states it reads.
struct Partial {
  std::uint32_t i, j;
  ExprId d;
  std::vector<std::uint8_t> reads;
};

// Strongly connected sets of the candidate states under "f_i reads y_j" (Tarjan). Only
// two-way coupling makes a set relax faster than its diagonal says: a one-way chain (a
// flux driven by gates) is advanced well state by state, its inputs frozen over a step.
std::vector<std::vector<std::uint32_t>> components(const std::vector<std::uint8_t>& candidate,
                                                   const std::vector<std::vector<std::uint8_t>>& reads) {
  const std::uint32_t n = std::uint32_t(candidate.size());
  std::vector<int> index(n, -1), low(n, 0);
  std::vector<std::uint8_t> on_stack(n, 0);
  std::vector<std::uint32_t> stack;
  std::vector<std::vector<std::uint32_t>> out;
  int next = 0;
  std::function<void(std::uint32_t)> visit = [&](std::uint32_t v) {
    index[v] = low[v] = next++;
    stack.push_back(v);
    on_stack[v] = 1;
    for (std::uint32_t w = 0; w < n; ++w) {
      if (w == v || !candidate[w] || !reads[v][w]) continue;
      if (index[w] < 0) {
        visit(w);
        low[v] = std::min(low[v], low[w]);
      } else if (on_stack[w]) {
        low[v] = std::min(low[v], index[w]);
      }
    }
    if (low[v] != index[v]) return;
    std::vector<std::uint32_t> comp;
    std::uint32_t w;
    do {
      w = stack.back();
      stack.pop_back();
      on_stack[w] = 0;
      comp.push_back(w);
    } while (w != v);
    if (comp.size() >= 2) {
      std::sort(comp.begin(), comp.end());
      out.push_back(std::move(comp));
    }
  };
  for (std::uint32_t v = 0; v < n; ++v)
    if (candidate[v] && index[v] < 0) visit(v);
  std::sort(out.begin(), out.end());
  return out;
}

// Σ f over the block vanishes at the initial state and at random occupancies near it.
bool conserves(const Model& m, const std::vector<std::uint32_t>& block) try {
  std::vector<double> y(m.states.size()), p(m.parameters.size());
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = m.states[i].initial;
  for (std::size_t k = 0; k < p.size(); ++k) p[k] = m.parameters[k].value;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 3; ++trial) {
    if (trial > 0)
      for (std::uint32_t i : block) y[i] = u(rng);
    double sum = 0, scale = 0;
    for (std::uint32_t i : block) {
      const double f = evaluate_point(m, m.derivatives[i], 0.0, y.data(), p.data());
      if (!std::isfinite(f)) return false;
      sum += f;
      scale += std::fabs(f);
    }
    if (std::fabs(sum) > 1e-9 * scale + 1e-300) return false;
  }
  return true;
} catch (const Error&) {
  return false;  // not evaluable at these points: report it as not conserving
}

// A concentration the affine rule dropped (calcium, sodium: the ligand a buffer binds),
// together with the states that only bind it: s is taken when s reads d, d reads s, s
// reads nothing but V, d and itself, and s is in no affine block (Markov chains that read
// d stay chains: merged into d's block, Winslow 1999, Jafri 1998 and Iyer 2004 diverged
// under grl2 at dt 0.01). Why: a buffer's rate kon·d·(Bmax − s) − koff·s is bilinear in d
// and s, so the affine rule leaves d out, and each buffer then relaxes with d frozen over
// a step while d is pulled back by every buffer at once. In Grandi 2010 that made grl2
// 1.04 ms late at dt 0.01 with a 3.7 % too high calcium transient; as blocks, the pairs are
// advanced together from their Jacobian at the step's midpoint (still second order).
void add_concentration_blocks(Model& m, const std::vector<std::uint8_t>& in,
                              const std::vector<std::vector<std::uint8_t>>& reads,
                              std::vector<Partial>& partials, std::vector<std::vector<std::uint32_t>>& sets) {
  // Without a known voltage nothing tells V from a concentration: V would take every gate
  // as its "buffers". (Roles come from load_model; a bare pipeline run has none.)
  if (!m.roles.voltage_state) return;
  const std::uint32_t ns = std::uint32_t(m.states.size());
  const std::uint32_t v = *m.roles.voltage_state;
  std::vector<std::uint8_t> taken(ns, 0);
  for (const auto& set : sets)
    for (std::uint32_t i : set) taken[i] = 1;
  std::vector<std::vector<std::uint32_t>> added;
  for (std::uint32_t d = 0; d < ns; ++d) {
    if (in[d] || d == v || taken[d]) continue;
    std::vector<std::uint32_t> block{d};
    for (std::uint32_t s = 0; s < ns; ++s) {
      if (s == d || s == v || taken[s] || !reads[s][d] || !reads[d][s]) continue;
      bool binds_only_d = true;
      for (std::uint32_t x = 0; x < ns && binds_only_d; ++x)
        if (reads[s][x] && x != d && x != v && x != s) binds_only_d = false;
      if (!binds_only_d || block.size() >= std::size_t(kMaxBlockStates)) continue;
      taken[s] = 1;
      block.push_back(s);
    }
    if (block.size() < 2) continue;
    taken[d] = 1;
    std::sort(block.begin(), block.end());
    added.push_back(std::move(block));
  }
  // The partials that involve d (made above only among the affine candidates).
  for (auto& b : added) {
    for (std::uint32_t i : b)
      for (std::uint32_t j : b)
        if (reads[i][j] && !(in[i] && in[j]))
          partials.push_back({i, j, fold_expr(m.pool, differentiate(m, m.derivatives[i], VarKind::state, j)), {}});
    sets.push_back(std::move(b));
  }
}

}  // namespace

void find_linear_blocks(Model& m) {
  m.blocks.clear();
  const std::size_t ns = m.states.size();
  for (StateAnalysis& a : m.analysis) a.block = -1;
  if (ns < 2) return;
  ExprReads reads_of(m);
  std::vector<std::vector<std::uint8_t>> reads(ns);
  for (std::size_t i = 0; i < ns; ++i) reads[i] = reads_of.of(m.derivatives[i]).states;
  std::vector<std::uint8_t> in(ns, 1);
  if (m.roles.voltage_state) in[*m.roles.voltage_state] = 0;

  // Every partial ∂f_i/∂y_j that is not identically zero, and the states it reads.
  std::vector<Partial> partials;
  for (std::uint32_t i = 0; i < ns; ++i)
    for (std::uint32_t j = 0; j < ns; ++j)
      if (in[i] && in[j] && reads[i][j]) {
        const ExprId d = fold_expr(m.pool, differentiate(m, m.derivatives[i], VarKind::state, j));
        partials.push_back({i, j, d, reads_of.of(d).states});
      }

  // The set must be affine in itself: no partial among its states may read one of them.
  // Greedily drop the state that most partials read (the calcium a chain's rates depend
  // on, the concentration a buffer binds), until none is read: that keeps the chains and
  // buffers and leaves their coefficients outside, frozen over a step.
  for (;;) {
    std::vector<std::size_t> count(ns, 0);
    for (const Partial& q : partials) {
      if (!in[q.i] || !in[q.j]) continue;
      for (std::size_t k = 0; k < ns; ++k) count[k] += in[k] && q.reads[k];
    }
    const auto worst = std::max_element(count.begin(), count.end());
    if (*worst == 0) break;
    in[std::size_t(worst - count.begin())] = 0;
  }

  std::vector<std::vector<std::uint32_t>> sets;
  for (const auto& comp : components(in, reads))
    if (comp.size() <= std::size_t(kMaxBlockStates)) sets.push_back(comp);

  add_concentration_blocks(m, in, reads, partials, sets);

  for (const auto& comp : sets) {
    LinearBlock b;
    b.states = comp;
    b.jacobian.assign(comp.size() * comp.size(), m.pool.constant(0.0));
    for (const Partial& q : partials) {
      const auto r = std::find(comp.begin(), comp.end(), q.i), c = std::find(comp.begin(), comp.end(), q.j);
      if (r != comp.end() && c != comp.end()) b.jacobian[std::size_t(r - comp.begin()) * comp.size() + std::size_t(c - comp.begin())] = q.d;
    }
    b.conserves = conserves(m, b.states);
    for (std::uint32_t i : b.states) m.analysis[i].block = int(m.blocks.size());
    m.blocks.push_back(std::move(b));
  }
}

std::string describe_blocks(const Model& m) {
  if (m.blocks.empty()) return "";
  std::string s = std::to_string(m.blocks.size()) + " linear block" + (m.blocks.size() > 1 ? "s" : "") +
                  " (advanced implicitly by grl1/grl2):";
  for (const LinearBlock& b : m.blocks) {
    s += "\n  {";
    for (std::size_t k = 0; k < b.states.size(); ++k) s += (k ? " " : "") + m.states[b.states[k]].name;
    s += "}";
    if (b.conserves) s += ", Markov chain (occupancy conserved)";
    bool affine = true;
    ExprReads reads(m);
    for (ExprId e : b.jacobian) {
      const auto r = reads.of(e).states;
      for (std::uint32_t i : b.states) affine = affine && !r[i];
    }
    if (!affine) s += ", a concentration and what binds it (not affine: linearised at the midpoint)";
  }
  return s;
}

}  // namespace hw::model
