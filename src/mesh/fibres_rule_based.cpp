// Distance transform, rotating and rule-based fibres; the rule is in the header.
#include "mesh/fibres_rule_based.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "mesh/ventricular_coordinates.hpp"

namespace hw::tissue {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// In place along one line of m samples at spacing h: d[p] ← min_q ((p−q)h)² + d[q].
// Lower envelope of the parabolas y = ((p−q)h)² + d[q]; v the parabola vertices, z the
// boundaries between them. Infinite d[q] contributes no parabola.
void edt_1d(double* d, std::size_t stride, int m, double h, std::vector<int>& v,
            std::vector<double>& z, std::vector<double>& f) {
  for (int q = 0; q < m; ++q) f[q] = d[q * stride];
  int k = -1;
  auto inter = [&](int q, int p) {  // abscissa (in cells) where parabolas q and p meet
    return ((f[q] + (q * h) * (q * h)) - (f[p] + (p * h) * (p * h))) / (2.0 * h * h * (q - p));
  };
  for (int q = 0; q < m; ++q) {
    if (!std::isfinite(f[q])) continue;
    double s = 0;
    // pop the envelope parabolas that parabola q undercuts from their boundary on
    while (k >= 0 && (s = inter(q, v[k])) <= z[k]) --k;
    if (k < 0) {
      v[0] = q;
      z[0] = -inf;
      z[1] = inf;
      k = 0;
      continue;
    }
    ++k;
    v[k] = q;
    z[k] = s;
    z[k + 1] = inf;
  }
  if (k < 0) return;  // no seed on this line: stays +∞
  int j = 0;
  for (int p = 0; p < m; ++p) {
    while (z[j + 1] < p) ++j;
    const double dp = (p - v[j]) * h;
    d[p * stride] = dp * dp + f[v[j]];
  }
}

}  // namespace

Field<double> distance_transform(const Grid& g, const Field<std::uint8_t>& seed) {
  if (seed.size() != g.size()) throw Error("distance_transform: seed size does not match the grid");
  // Squared distance, separably: D = min over x, then y, then z, of the summed squares.
  Field<double> d(g, inf);
  for (std::size_t n = 0; n < g.size(); ++n)
    if (seed[n]) d[n] = 0.0;
  const int mmax = std::max({g.nx(), g.ny(), g.nz()});
  std::vector<int> v(mmax);
  std::vector<double> z(mmax + 1), f(mmax);
  for (int a = 0; a < 3; ++a) {
    if (g.n[a] == 1) continue;
    const int b = (a + 1) % 3, c = (a + 2) % 3;
    for (int jc = 0; jc < g.n[c]; ++jc)
      for (int jb = 0; jb < g.n[b]; ++jb) {
        std::array<int, 3> ijk{0, 0, 0};
        ijk[b] = jb;
        ijk[c] = jc;
        double* line = d.data() + g.index(ijk[0], ijk[1], ijk[2]);
        edt_1d(line, g.stride(a), g.n[a], g.h[a], v, z, f);
      }
  }
  for (std::size_t n = 0; n < g.size(); ++n) d[n] = std::sqrt(d[n]);
  return d;
}

FibreField rotating_fibres(const Grid& g, int axis, double angle_lo_deg, double angle_hi_deg) {
  if (axis < 0 || axis > 2) throw Error(fmt::format("rotating fibres: axis {} must be 0, 1 or 2", axis));
  FibreField r;
  for (int a = 0; a < 3; ++a) r.f[a] = Field<double>(g, 0.0);
  const double pi = std::acos(-1.0);
  const int u = (axis + 1) % 3, w = (axis + 2) % 3;
  const int m = g.n[axis];
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const int t = axis == 0 ? i : axis == 1 ? j : k;
        const double s = m > 1 ? double(t) / (m - 1) : 0.0;
        // f = cos α·e_u + sin α·e_w, α linear along the axis.
        const double ang = (angle_lo_deg + s * (angle_hi_deg - angle_lo_deg)) * pi / 180.0;
        const std::size_t n = g.index(i, j, k);
        r.f[u][n] = std::cos(ang);
        r.f[w][n] = std::sin(ang);
      }
  return r;
}

TransmuralField transmural_coordinate(const Grid& g, const Mask& mask,
                                      const Field<std::int16_t>& labels, std::int16_t epi_label,
                                      std::array<std::int16_t, 2> endo_labels) {
  if (labels.size() != g.size()) throw Error("transmural coordinate: labels do not match the grid");
  Field<std::uint8_t> epi(g, 0), endo(g, 0);
  std::size_t n_epi = 0, n_endo = 0;
  for (std::size_t n = 0; n < g.size(); ++n) {
    if (!is_tissue(&mask, n)) continue;
    if (labels[n] == epi_label) epi[n] = 1, ++n_epi;
    if (labels[n] == endo_labels[0] || labels[n] == endo_labels[1]) endo[n] = 1, ++n_endo;
  }
  if (n_epi == 0 || n_endo == 0)
    throw Error(fmt::format("rule-based fibres need both surfaces labelled: {} epicardial (label {}) and {} "
                            "endocardial (labels {}, {}) tissue cells", n_epi, epi_label, n_endo,
                            endo_labels[0], endo_labels[1]));
  const Field<double> d_epi = distance_transform(g, epi), d_endo = distance_transform(g, endo);
  TransmuralField t;
  t.e = Field<double>(g, 0.0);
  // e = d_endo/(d_endo + d_epi)
  for (std::size_t n = 0; n < g.size(); ++n) {
    if (!is_tissue(&mask, n)) continue;
    const double s = d_endo[n] + d_epi[n];
    t.e[n] = s > 0 ? d_endo[n] / s : 0.5;
  }
  for (int a = 0; a < 3; ++a) t.normal[a] = Field<double>(g, 0.0);
  // ∇e by central differences between tissue cells, one-sided next to non-tissue.
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const std::size_t n = g.index(i, j, k);
        if (!is_tissue(&mask, n)) continue;
        const std::array<int, 3> ijk{i, j, k};
        std::array<double, 3> grad{0, 0, 0};
        for (int a = 0; a < 3; ++a) {
          double lo = t.e[n], hi = t.e[n], span = 0;
          for (int d : {-1, 1}) {
            std::array<int, 3> q = ijk;
            q[a] += d;
            if (q[a] < 0 || q[a] >= g.n[a]) continue;
            const std::size_t m = g.index(q[0], q[1], q[2]);
            if (!is_tissue(&mask, m)) continue;
            (d < 0 ? lo : hi) = t.e[m];
            span += g.h[a];
          }
          grad[a] = span > 0 ? (hi - lo) / span : 0.0;
        }
        const double len = std::sqrt(grad[0] * grad[0] + grad[1] * grad[1] + grad[2] * grad[2]);
        if (len > 0)
          for (int a = 0; a < 3; ++a) t.normal[a][n] = grad[a] / len;
      }
  return t;
}

FibreField rule_based_fibres(const Grid& g, const Mask& mask, const TransmuralField& t,
                             double angle_endo_deg, double angle_epi_deg, int long_axis) {
  if (long_axis < 0 || long_axis > 2)
    throw Error(fmt::format("rule-based fibres: long axis {} must be 0, 1 or 2", long_axis));
  std::array<double, 3> ax{0, 0, 0};
  ax[long_axis] = 1;
  return rule_based_fibres(g, mask, t, std::vector<double>{angle_endo_deg, angle_epi_deg}, ax);
}

FibreField rule_based_fibres(const Grid& g, const Mask& mask, const TransmuralField& t,
                             const std::vector<double>& angles_deg, std::array<double, 3> ax) {
  if (angles_deg.empty()) throw Error("rule-based fibres: no helix angles");
  const double pi = std::acos(-1.0);
  FibreField r;
  std::array<Field<double>, 3> s;
  for (int a = 0; a < 3; ++a) r.f[a] = Field<double>(g, 0.0), s[a] = Field<double>(g, 0.0);
  auto cross = [](const std::array<double, 3>& x, const std::array<double, 3>& y) {
    return std::array<double, 3>{x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2],
                                 x[0] * y[1] - x[1] * y[0]};
  };
  auto normalise = [](std::array<double, 3>& x) {
    const double l = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    if (l > 0) for (double& c : x) c /= l;
    return l;
  };
  if (!(normalise(ax) > 0) || !std::isfinite(ax[0] + ax[1] + ax[2]))
    throw Error("rule-based fibres: the long axis is zero");
  // The grid axis least aligned with the long axis: the fallback direction at the apex.
  int least = 0;
  for (int a = 1; a < 3; ++a)
    if (std::fabs(ax[a]) < std::fabs(ax[least])) least = a;
  std::array<double, 3> other{0, 0, 0};
  other[least] = 1;
  for (std::size_t n = 0; n < g.size(); ++n) {
    if (!is_tissue(&mask, n)) continue;
    std::array<double, 3> nn{t.normal[0][n], t.normal[1][n], t.normal[2][n]};
    if (normalise(nn) == 0) {
      // No transmural direction (an isolated cell): any fibre across the long axis.
      const double d = other[0] * ax[0] + other[1] * ax[1] + other[2] * ax[2];
      std::array<double, 3> c{other[0] - d * ax[0], other[1] - d * ax[1], other[2] - d * ax[2]};
      normalise(c);
      for (int a = 0; a < 3; ++a) r.f[a][n] = c[a];
      continue;
    }
    std::array<double, 3> c = cross(nn, ax);
    if (normalise(c) < 1e-3) {
      // n ∥ long axis (apex): take the other axis projected perpendicular to n.
      const double d = other[0] * nn[0] + other[1] * nn[1] + other[2] * nn[2];
      for (int a = 0; a < 3; ++a) c[a] = other[a] - d * nn[a];
      normalise(c);
    }
    const std::array<double, 3> b = cross(nn, c);
    // f = cos α · c + sin α · (n × c), α from the profile at e.
    const double alpha = helix_angle(angles_deg, t.e[n]) * pi / 180.0;
    for (int a = 0; a < 3; ++a) {
      r.f[a][n] = std::cos(alpha) * c[a] + std::sin(alpha) * b[a];
      s[a][n] = nn[a];
    }
  }
  r.s = std::move(s);
  return r;
}

}  // namespace hw::tissue
