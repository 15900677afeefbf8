#include "model/emit/block_solver.hpp"

#include <fmt/format.h>

#include <sstream>

namespace hw::model {

int BlockPattern::a_entries() const {
  int k = 0;
  for (std::uint8_t v : a_nonzero) k += v;
  return k;
}

int BlockPattern::lu_entries() const {
  int k = 0;
  for (std::uint8_t v : lu_nonzero) k += v;
  return k;
}

namespace {

// Minimum degree on the graph of A + Aᵀ (ties to the lower index): the pivot order with the
// least fill for the small chains the blocks hold. A symmetric permutation keeps the column
// diagonal dominance of I − h·A that makes elimination without pivoting stable.
std::vector<int> minimum_degree_order(int n, const std::vector<std::uint8_t>& nz) {
  std::vector<std::vector<std::uint8_t>> adj(std::size_t(n), std::vector<std::uint8_t>(std::size_t(n), 0));
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c)
      if (r != c && nz[r * n + c]) adj[r][c] = adj[c][r] = 1;
  std::vector<std::uint8_t> done(std::size_t(n), 0);
  std::vector<int> order;
  for (int step = 0; step < n; ++step) {
    int best = -1, best_degree = n + 1;
    for (int v = 0; v < n; ++v) {
      if (done[v]) continue;
      int degree = 0;
      for (int u = 0; u < n; ++u) degree += !done[u] && adj[v][u];
      if (degree < best_degree) best = v, best_degree = degree;
    }
    done[best] = 1;
    order.push_back(best);
    for (int a = 0; a < n; ++a)  // eliminating best joins its remaining neighbours
      for (int b = 0; b < n; ++b)
        if (a != b && !done[a] && !done[b] && adj[best][a] && adj[best][b]) adj[a][b] = 1;
  }
  return order;
}

}  // namespace

std::vector<BlockPattern> block_patterns(const Model& m) {
  std::vector<BlockPattern> out;
  int offset = 0;
  for (const LinearBlock& b : m.blocks) {
    BlockPattern p;
    const int n = int(b.states.size());
    p.n = n;
    p.offset = offset;
    p.states = b.states;
    p.a_nonzero.resize(b.jacobian.size());
    for (std::size_t k = 0; k < b.jacobian.size(); ++k) p.a_nonzero[k] = m.pool.is_constant(b.jacobian[k], 0.0) ? 0 : 1;
    p.order = minimum_degree_order(n, p.a_nonzero);
    p.lu_nonzero.assign(std::size_t(n) * n, 0);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) p.lu_nonzero[r * n + c] = r == c || p.a(r, c);  // 1 − h·A_rr
    for (int k = 0; k < n; ++k)
      for (int i = k + 1; i < n; ++i)
        if (p.lu_nonzero[i * n + k])
          for (int j = k + 1; j < n; ++j)
            if (p.lu_nonzero[k * n + j]) p.lu_nonzero[i * n + j] = 1;
    offset += n * n;
    out.push_back(std::move(p));
  }
  return out;
}

BlockWork block_work_of(const std::vector<BlockPattern>& patterns) {
  BlockWork w;
  for (const BlockPattern& p : patterns) {
    const int n = p.n;
    w.factor_flops += p.a_entries();  // h·A_rc
    for (int r = 0; r < n; ++r) w.factor_flops += p.a(r, r);  // 1 − h·A_rr
    for (int k = 0; k < n; ++k) {
      bool pivot_used = false;
      for (int i = k + 1; i < n; ++i) {
        if (!p.lu(i, k)) continue;
        pivot_used = true;
        w.factor_flops += 1;  // l = lu_ik · (1/lu_kk)
        for (int j = k + 1; j < n; ++j) w.factor_flops += p.lu(k, j) ? 2 : 0;
      }
      w.factor_divisions += pivot_used ? 1 : 0;
    }
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n; ++k) w.solve_flops += k != i && p.lu(i, k) ? 2 : 0;
    w.solve_divisions += n;
    w.axpy_flops += 2 * p.a_entries() + 2 * n;
  }
  return w;
}

namespace {

std::string at(const char* array, int index) { return fmt::format("{}[{}]", array, index); }

void print_factor(std::ostream& o, const BlockPattern& p, std::size_t b, const std::string& real,
                  const std::string& in) {
  const int n = p.n;
  const auto lu = [&](int r, int c) { return at("lu", p.lu_index(r, c)); };
  o << in << "  // block " << b << ": " << n << " states, " << p.a_entries() << " of " << n * n
    << " entries nonzero, " << p.lu_entries() << " after fill\n";
  std::vector<std::uint8_t> written(std::size_t(n) * n, 0);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) {
      if (!p.a(r, c) && r != c) continue;
      written[r * n + c] = 1;
      const std::string hA = p.a(r, c) ? "h * " + at("A", p.a_index(r, c)) : "";
      o << in << "  " << lu(r, c) << " = "
        << (r == c ? (hA.empty() ? real + "(1)" : real + "(1) - " + hA) : "-(" + hA + ")") << ";\n";
    }
  for (int k = 0; k < n; ++k) {
    bool any = false;
    for (int i = k + 1; i < n; ++i) any = any || p.lu(i, k);
    if (!any) continue;
    o << in << "  {\n" << in << "    const " << real << " inv = " << real << "(1) / " << lu(k, k) << ";\n";
    for (int i = k + 1; i < n; ++i) {
      if (!p.lu(i, k)) continue;
      o << in << "    {\n" << in << "      const " << real << " l = " << lu(i, k) << " * inv;\n"
        << in << "      " << lu(i, k) << " = l;\n";
      for (int j = k + 1; j < n; ++j) {
        if (!p.lu(k, j)) continue;
        if (written[i * n + j])
          o << in << "      " << lu(i, j) << " -= l * " << lu(k, j) << ";\n";
        else  // fill: the dense loops subtract from a zero
          o << in << "      " << lu(i, j) << " = -(l * " << lu(k, j) << ");\n";
        written[i * n + j] = 1;
      }
      o << in << "    }\n";
    }
    o << in << "  }\n";
  }
}

void print_solve(std::ostream& o, const BlockPattern& p, std::size_t b, const std::string& in) {
  const int n = p.n;
  const auto lu = [&](int r, int c) { return at("lu", p.lu_index(r, c)); };
  const auto x = [&](int r) { return at("x", int(p.state(r))); };
  o << in << "  // block " << b << "\n";
  for (int i = 1; i < n; ++i)
    for (int k = 0; k < i; ++k)
      if (p.lu(i, k)) o << in << "  " << x(i) << " -= " << lu(i, k) << " * " << x(k) << ";\n";
  for (int i = n - 1; i >= 0; --i) {
    for (int k = i + 1; k < n; ++k)
      if (p.lu(i, k)) o << in << "  " << x(i) << " -= " << lu(i, k) << " * " << x(k) << ";\n";
    o << in << "  " << x(i) << " /= " << lu(i, i) << ";\n";
  }
}

// Rows in the block's own order, as the dense loop sums them.
void print_axpy(std::ostream& o, const BlockPattern& p, const std::string& real, const std::string& in) {
  const int n = p.n;
  for (int r = 0; r < n; ++r) {
    std::string acc;
    for (int c = 0; c < n; ++c) {
      if (!p.a_nonzero[r * n + c]) continue;
      const std::string term = at("A", p.offset + r * n + c) + " * " + at("d", int(p.states[c]));
      if (acc.empty()) {
        o << in << "  {\n" << in << "    " << real << " acc = " << term << ";\n";
        acc = "acc";
      } else {
        o << in << "    acc += " << term << ";\n";
      }
    }
    const std::string s = at("x", int(p.states[r]));
    if (acc.empty())
      o << in << "  " << at("out", int(p.states[r])) << " = " << s << " + s * " << real << "(0);\n";
    else
      o << in << "    " << at("out", int(p.states[r])) << " = " << s << " + s * acc;\n" << in << "  }\n";
  }
}

}  // namespace

std::string print_block_factor_solve(const BlockPattern& p, std::size_t b, const std::string& real,
                                     const std::string& indent) {
  std::ostringstream o;
  print_factor(o, p, b, real, indent);
  print_solve(o, p, b, indent);
  return o.str();
}

std::string print_block_solver(const Model& m, const std::string& real, const std::string& qualifier,
                               const std::string& indent) {
  if (m.blocks.empty()) return "";
  const std::vector<BlockPattern> patterns = block_patterns(m);
  std::ostringstream o;
  const std::string& in = indent;
  o << in << "// The blocks' LU, substitutions and products over their nonzeros only\n"
    << in << "// (model/emit/block_solver.hpp): the integrators call these instead of their dense loops.\n"
    << in << "static constexpr bool kSparseBlocks = true;\n";
  o << in << qualifier << "void factor_blocks_sparse(" << real << " h, const " << real << "* A, " << real
    << "* lu) const {\n";
  for (std::size_t b = 0; b < patterns.size(); ++b) print_factor(o, patterns[b], b, real, in);
  o << in << "}\n";
  o << in << qualifier << "void solve_blocks_sparse(const " << real << "* lu, " << real << "* x) const {\n";
  for (std::size_t b = 0; b < patterns.size(); ++b) print_solve(o, patterns[b], b, in);
  o << in << "}\n";
  o << in << qualifier << "void block_axpy_sparse(const " << real << "* A, " << real << " s, const " << real
    << "* d, const " << real << "* x, " << real << "* out) const {\n";
  for (const BlockPattern& p : patterns) print_axpy(o, p, real, in);
  o << in << "}\n";
  return o.str();
}

std::string describe_block_sparsity(const Model& m) {
  std::string out;
  const std::vector<BlockPattern> patterns = block_patterns(m);
  for (std::size_t b = 0; b < patterns.size(); ++b) {
    const BlockPattern& p = patterns[b];
    out += fmt::format("{}{}: {}/{} nonzero, LU {}", b ? "; " : "", b, p.a_entries(), p.n * p.n, p.lu_entries());
  }
  return out;
}

}  // namespace hw::model
