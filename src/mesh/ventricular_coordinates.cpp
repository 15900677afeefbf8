// Long axis, apex-base coordinate and helix angle profiles (see ventricular_coordinates.hpp).
#include "mesh/ventricular_coordinates.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::tissue {

namespace {

using Vec = std::array<double, 3>;
using Mat = std::array<Vec, 3>;

double dot(const Vec& a, const Vec& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

Vec centre_of(const Grid& g, std::size_t n) {
  const int i = int(n % g.nx()), j = int((n / g.nx()) % g.ny()), k = int(n / (std::size_t(g.nx()) * g.ny()));
  return {g.centre(0, i), g.centre(1, j), g.centre(2, k)};
}

// Eigenvector of the largest eigenvalue of a symmetric 3×3 matrix, by cyclic Jacobi
// rotations (exact enough after a few sweeps; the matrix is a covariance, well scaled).
Vec principal_eigenvector(Mat a) {
  Mat v{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
  for (int sweep = 0; sweep < 50; ++sweep) {
    const double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
    if (off < 1e-30 * (a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2] + 1e-300)) break;
    for (int p = 0; p < 2; ++p)
      for (int q = p + 1; q < 3; ++q) {
        if (a[p][q] == 0) continue;
        const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const double t = (theta >= 0 ? 1 : -1) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int r = 0; r < 3; ++r) {  // A ← A·J
          const double arp = a[r][p], arq = a[r][q];
          a[r][p] = c * arp - s * arq;
          a[r][q] = s * arp + c * arq;
        }
        for (int r = 0; r < 3; ++r) {  // A ← Jᵀ·A
          const double apr = a[p][r], aqr = a[q][r];
          a[p][r] = c * apr - s * aqr;
          a[q][r] = s * apr + c * aqr;
        }
        for (int r = 0; r < 3; ++r) {  // V ← V·J
          const double vrp = v[r][p], vrq = v[r][q];
          v[r][p] = c * vrp - s * vrq;
          v[r][q] = s * vrp + c * vrq;
        }
      }
  }
  int best = 0;
  for (int d = 1; d < 3; ++d)
    if (a[d][d] > a[best][best]) best = d;
  return {v[0][best], v[1][best], v[2][best]};
}

}  // namespace

std::string LongAxis::describe() const {
  return fmt::format("long axis {} ({:.3f}, {:.3f}, {:.3f}) apex → base, {:.1f} mm of tissue along it; apex {}",
                     given ? "from the case" : "found (" + found_from + ")", dir[0], dir[1],
                     dir[2], base - apex, apex_from);
}

LongAxis find_long_axis(const Grid& g, const Mask& mask, const Field<std::int16_t>& labels,
                        std::array<std::int16_t, 2> endo_labels, std::optional<Vec> given,
                        std::optional<Vec> base_towards, const std::string& base_reason) {
  LongAxis ax;
  // The cells whose shape gives the axis: the LV endocardium when labelled (the LV cavity
  // is a prolate ellipsoid about the long axis; the whole ventricles are nearly as wide as
  // long: on the UCSD rabbit their variances are 59, 42, 37 mm², the LV endocardium's 51,
  // 19, 8), else the whole tissue.
  std::size_t lv = 0, count = 0;
  if (!labels.empty())
    for (std::size_t n = 0; n < g.size(); ++n) lv += is_tissue(&mask, n) && labels[n] == endo_labels[0];
  const bool by_lv = lv >= 10;
  auto counts = [&](std::size_t n) { return is_tissue(&mask, n) && (!by_lv || labels[n] == endo_labels[0]); };
  Vec mean{0, 0, 0};
  for (std::size_t n = 0; n < g.size(); ++n) {
    if (!counts(n)) continue;
    const Vec x = centre_of(g, n);
    ++count;
    for (int a = 0; a < 3; ++a) mean[a] += (x[a] - mean[a]) / double(count);
  }
  if (count == 0) throw Error("long axis: the geometry has no tissue");
  if (given) {
    const double len = std::sqrt(dot(*given, *given));
    if (!(len > 0) || !std::isfinite(len)) throw Error("long axis: the given axis is zero");
    for (int a = 0; a < 3; ++a) ax.dir[a] = (*given)[a] / len;
    ax.given = true;
  } else {
    Mat cov{};
    for (std::size_t n = 0; n < g.size(); ++n) {
      if (!counts(n)) continue;
      const Vec x = centre_of(g, n);
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) cov[a][b] += (x[a] - mean[a]) * (x[b] - mean[b]);
    }
    ax.dir = principal_eigenvector(cov);
    ax.found_from = by_lv ? "principal axis of the LV endocardium" : "principal axis of the tissue";
    // Report it with its largest component positive (the sign is decided below).
    int big = 0;
    for (int a = 1; a < 3; ++a)
      if (std::fabs(ax.dir[a]) > std::fabs(ax.dir[big])) big = a;
    if (ax.dir[big] < 0)
      for (double& c : ax.dir) c = -c;
  }
  // Extremes of the tissue and of the endocardial cells along the axis.
  constexpr double inf = std::numeric_limits<double>::infinity();
  double tlo = inf, thi = -inf, elo = inf, ehi = -inf;
  for (std::size_t n = 0; n < g.size(); ++n) {
    if (!is_tissue(&mask, n)) continue;
    const double p = dot(centre_of(g, n), ax.dir);
    tlo = std::min(tlo, p), thi = std::max(thi, p);
    if (!labels.empty() && (labels[n] == endo_labels[0] || labels[n] == endo_labels[1]))
      elo = std::min(elo, p), ehi = std::max(ehi, p);
  }
  bool apex_at_low;
  if (base_towards && dot(*base_towards, ax.dir) != 0) {
    apex_at_low = dot(*base_towards, ax.dir) > 0;
    ax.apex_from = base_reason;
  } else if (elo <= ehi) {
    // The cavities open at the base: the endocardium comes close to the base's end of the
    // tissue and stays a wall's thickness away from the apex.
    apex_at_low = (elo - tlo) >= (thi - ehi);
    ax.apex_from = fmt::format("at the end farther from the endocardial labels ({:.1f} mm against {:.1f} mm)",
                               std::max(elo - tlo, thi - ehi), std::min(elo - tlo, thi - ehi));
  } else {
    // No cavity labels: the apex is the narrow end (less tissue in its fifth of the length).
    const double span = thi - tlo;
    std::size_t lo_cells = 0, hi_cells = 0;
    for (std::size_t n = 0; n < g.size(); ++n) {
      if (!is_tissue(&mask, n)) continue;
      const double p = dot(centre_of(g, n), ax.dir);
      if (p < tlo + 0.2 * span) ++lo_cells;
      if (p > thi - 0.2 * span) ++hi_cells;
    }
    apex_at_low = lo_cells <= hi_cells;
    ax.apex_from = fmt::format("at the narrower end ({} against {} tissue cells in the end fifths)",
                               std::min(lo_cells, hi_cells), std::max(lo_cells, hi_cells));
  }
  if (!apex_at_low) {
    for (double& c : ax.dir) c = -c;
    std::swap(tlo, thi);
    tlo = -tlo, thi = -thi;
  }
  ax.apex = tlo;
  ax.base = thi;
  return ax;
}

Field<float> apex_base_coordinate(const Grid& g, const Mask& mask, const LongAxis& axis) {
  Field<float> z(g, 0.0f);
  const double span = axis.base - axis.apex;
  for (std::size_t n = 0; n < g.size(); ++n) {
    if (!is_tissue(&mask, n)) continue;
    const double p = span > 0 ? (dot(centre_of(g, n), axis.dir) - axis.apex) / span : 0.0;
    z[n] = static_cast<float>(std::clamp(p, 0.0, 1.0));
  }
  return z;
}

double helix_angle(const std::vector<double>& angles, double e) {
  if (angles.empty()) throw Error("helix angle: no angles");
  if (angles.size() == 1) return angles[0];
  const double x = std::clamp(e, 0.0, 1.0) * double(angles.size() - 1);
  const std::size_t i = std::min(angles.size() - 2, std::size_t(x));
  const double t = x - double(i);
  return angles[i] + (angles[i + 1] - angles[i]) * t;
}

}  // namespace hw::tissue
