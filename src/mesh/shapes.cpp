// Analytic shapes as masks and surface labels; see shapes.hpp.
#include "mesh/shapes.hpp"

#include <cmath>

namespace hw::tissue {

namespace {

// Σ((x−c)/r)² at the centre of cell (i,j,k), over the axes with r > 0 … all three must be
// positive for an ellipsoid; a zero radius makes the ellipsoid empty (returns +∞).
double ellipsoid_q(const Grid& g, int i, int j, int k, const std::array<double, 3>& c,
                   const std::array<double, 3>& r) {
  const std::array<int, 3> ijk{i, j, k};
  double q = 0;
  for (int a = 0; a < 3; ++a) {
    if (!(r[a] > 0)) return INFINITY;
    const double d = (g.centre(a, ijk[a]) - c[a]) / r[a];
    q += d * d;
  }
  return q;
}

}  // namespace

ShapeVolume ellipsoid_shell(const Grid& g, std::array<double, 3> centre,
                            std::array<double, 3> radii_outer, std::array<double, 3> radii_inner) {
  ShapeVolume s;
  s.mask = Mask(g, 0);
  s.labels = Field<std::int16_t>(g, label_outside);
  // 0 outside the outer ellipsoid, 1 tissue, 2 inside the inner one (the cavity).
  Field<std::uint8_t> zone(g, 0);
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const std::size_t n = g.index(i, j, k);
        if (ellipsoid_q(g, i, j, k, centre, radii_outer) > 1.0) continue;
        zone[n] = ellipsoid_q(g, i, j, k, centre, radii_inner) <= 1.0 ? 2 : 1;
        s.mask[n] = zone[n] == 1;
      }
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const std::size_t n = g.index(i, j, k);
        if (zone[n] != 1) continue;
        bool epi = false, endo = false;
        const std::array<int, 3> ijk{i, j, k};
        for (int a = 0; a < 3; ++a)
          for (int d : {-1, 1}) {
            std::array<int, 3> q = ijk;
            q[a] += d;
            if (q[a] < 0 || q[a] >= g.n[a]) {
              if (g.active(a)) epi = true;
              continue;
            }
            const std::uint8_t z = zone[g.index(q[0], q[1], q[2])];
            epi |= z == 0;
            endo |= z == 2;
          }
        s.labels[n] = epi ? label_epi : endo ? label_lv_endo : label_myocardium;
      }
  return s;
}

ShapeVolume slab_with_hole(const Grid& g, std::array<double, 3> centre, double hole_radius) {
  ShapeVolume s;
  s.mask = Mask(g, 1);
  const double r2 = hole_radius * hole_radius;
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const double dx = g.centre(0, i) - centre[0], dy = g.centre(1, j) - centre[1];
        if (dx * dx + dy * dy <= r2) s.mask[g.index(i, j, k)] = 0;
      }
  s.labels = label_surface(g, s.mask, label_lv_endo, false);
  return s;
}

Field<std::int16_t> label_surface(const Grid& g, const Mask& m, std::int16_t surface,
                                  bool walls_are_outside) {
  Field<std::int16_t> lab(g, label_outside);
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const std::size_t n = g.index(i, j, k);
        if (!is_tissue(&m, n)) continue;
        bool surf = false;
        const std::array<int, 3> ijk{i, j, k};
        for (int a = 0; a < 3 && !surf; ++a)
          for (int d : {-1, 1}) {
            std::array<int, 3> q = ijk;
            q[a] += d;
            if (q[a] < 0 || q[a] >= g.n[a]) {
              surf |= walls_are_outside && g.active(a);
              continue;
            }
            surf |= !is_tissue(&m, g.index(q[0], q[1], q[2]));
          }
        lab[n] = surf ? surface : label_myocardium;
      }
  return lab;
}

}  // namespace hw::tissue
