// Phase field from a mask and the phase-field conductivity; the method is in the header.
#include "mesh/phase_field.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "mesh/fibres_rule_based.hpp"

namespace hw::tissue {

double phase_profile(double d, double xi) {
  return 0.5 * (1.0 + std::tanh(d / (2.0 * std::sqrt(2.0) * xi)));
}

Field<float> phase_field_from_mask(const Grid& g, const Mask& mask, double xi, int relax_steps) {
  if (!(xi > 0)) throw Error(fmt::format("phase field: width xi = {} mm must be > 0", xi));
  Field<float> phi(g, 1.0f);
  if (mask.empty()) return phi;
  if (mask.size() != g.size()) throw Error("phase field: mask size does not match the grid");
  Field<std::uint8_t> tissue(g, 0), outside(g, 0);
  bool any_out = false;
  for (std::size_t n = 0; n < g.size(); ++n) {
    tissue[n] = mask[n] != 0;
    outside[n] = mask[n] == 0;
    any_out |= outside[n] != 0;
  }
  if (!any_out) return phi;
  const Field<double> d_out = distance_transform(g, outside), d_in = distance_transform(g, tissue);
  // The boundary lies half a cell from the centres on either side of it.
  double hbar = 0;
  int na = 0;
  for (int a = 0; a < 3; ++a)
    if (g.active(a)) hbar += g.h[a], ++na;
  hbar = na ? hbar / na : g.h[0];
  for (std::size_t n = 0; n < g.size(); ++n) {
    const double sd = tissue[n] ? d_out[n] - 0.5 * hbar : -(d_in[n] - 0.5 * hbar);
    phi[n] = static_cast<float>(phase_profile(sd, xi));
  }
  if (relax_steps <= 0) return phi;
  // ∂φ/∂t = ξ²∇²φ + φ(1−φ)(φ−½), forward Euler, mirror (no-flux) walls; dt at 40% of the
  // diffusive limit and ≤ 0.5 for the reaction (|f'| ≤ ½).
  double lap_bound = 0;
  for (int a = 0; a < 3; ++a)
    if (g.active(a)) lap_bound += 4.0 / (g.h[a] * g.h[a]);
  const double dt = std::min(0.5, 0.8 / (xi * xi * lap_bound));
  Field<float> next(g, 0.0f);
  for (int step = 0; step < relax_steps; ++step) {
    for (int k = 0; k < g.nz(); ++k)
      for (int j = 0; j < g.ny(); ++j)
        for (int i = 0; i < g.nx(); ++i) {
          const std::size_t n = g.index(i, j, k);
          const std::array<int, 3> ijk{i, j, k};
          const double p = phi[n];
          double lap = 0;
          for (int a = 0; a < 3; ++a) {
            if (!g.active(a)) continue;
            for (int d : {-1, 1}) {
              const int m = g.neighbour(a, ijk[a], d);
              if (m < 0) continue;  // mirror wall: zero flux
              std::array<int, 3> q = ijk;
              q[a] = m;
              lap += (phi[g.index(q[0], q[1], q[2])] - p) / (g.h[a] * g.h[a]);
            }
          }
          next[n] = static_cast<float>(p + dt * (xi * xi * lap + p * (1 - p) * (p - 0.5)));
        }
    std::swap(phi, next);
  }
  for (std::size_t n = 0; n < g.size(); ++n) phi[n] = std::clamp(phi[n], 0.0f, 1.0f);
  return phi;
}

PhaseFieldDiffusion phase_field_diffusion(const Grid& g, const Field<float>& phase,
                                          const Conductivity& base, double threshold) {
  if (phase.size() != g.size())
    throw Error(fmt::format("phase field: {} values, the grid has {} cells", phase.size(), g.size()));
  PhaseFieldDiffusion d;
  d.mask = Mask(g, 0);
  d.phi = Field<double>(g, 0.0);
  std::size_t count = 0;
  for (std::size_t n = 0; n < g.size(); ++n)
    if (phase[n] > threshold) {
      d.mask[n] = 1;
      d.phi[n] = phase[n];
      ++count;
    }
  if (count == 0)
    throw Error(fmt::format("phase field: no cell has phi > {} (threshold leaves no tissue)", threshold));
  d.sigma = base.scaled(g, d.phi);
  return d;
}

double phase_field_rate_bound(const Grid& g, const PhaseFieldDiffusion& d) {
  const Conductivity& s = d.sigma;
  auto tissue = [&](std::size_t n) { return d.mask[n] != 0; };
  double bound = 0;
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const std::size_t n = g.index(i, j, k);
        if (!tissue(n)) continue;
        const std::array<int, 3> ijk{i, j, k};
        double sum = 0;  // Σ|link weights| touching n
        for (int a = 0; a < 3; ++a) {
          if (!g.active(a)) continue;
          for (int dd : {-1, 1}) {
            const int m = g.neighbour(a, ijk[a], dd);
            if (m < 0) continue;
            std::array<int, 3> q = ijk;
            q[a] = m;
            const std::size_t nm = g.index(q[0], q[1], q[2]);
            if (!tissue(nm)) continue;
            const double x = s.get(a, n), y = s.get(a, nm);
            sum += (x + y > 0 ? 2 * x * y / (x + y) : 0.0) / (g.h[a] * g.h[a]);
          }
        }
        if (s.has_off_diagonal()) {
          // The four edges of plane (a,b) around n, each joining n, n+da·e_a, n+db·e_b, n+da·e_a+db·e_b.
          for (int a = 0; a < 3; ++a)
            for (int b = a + 1; b < 3; ++b) {
              if (!g.active(a) || !g.active(b)) continue;
              const int c = tensor_comp(a, b);
              for (int da : {-1, 1})
                for (int db : {-1, 1}) {
                  const int ma = g.neighbour(a, ijk[a], da), mb = g.neighbour(b, ijk[b], db);
                  if (ma < 0 || mb < 0) continue;
                  std::array<int, 3> qa = ijk, qb = ijk, qab = ijk;
                  qa[a] = ma;
                  qb[b] = mb;
                  qab[a] = ma;
                  qab[b] = mb;
                  const std::size_t na = g.index(qa[0], qa[1], qa[2]), nb = g.index(qb[0], qb[1], qb[2]),
                                    nab = g.index(qab[0], qab[1], qab[2]);
                  if (!tissue(na) || !tissue(nb) || !tissue(nab)) continue;
                  const double e = (s.get(c, n) + s.get(c, na) + s.get(c, nb) + s.get(c, nab)) / 4.0 /
                                   (2.0 * g.h[a] * g.h[b]);
                  sum += std::abs(e);
                }
            }
        }
        bound = std::max(bound, 2.0 * sum / d.phi[n]);
      }
  return bound;
}

}  // namespace hw::tissue
