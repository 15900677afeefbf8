// See mesh_shapes.hpp.
#include "mesh/mesh_shapes.hpp"

#include <cmath>
#include <numbers>

namespace hw::tissue {

namespace {

using P3 = std::array<double, 3>;

// Position at wall depth t, polar angle θ (0 = apex direction), azimuth φ.
P3 position(const EllipsoidLvSpec& s, double t, double th, double ph) {
  P3 r;
  const double ax = s.inner[0] + t * (s.outer[0] - s.inner[0]), ay = s.inner[1] + t * (s.outer[1] - s.inner[1]),
               az = s.inner[2] + t * (s.outer[2] - s.inner[2]);
  r[0] = ax * std::sin(th) * std::cos(ph);
  r[1] = ay * std::sin(th) * std::sin(ph);
  r[2] = -az * std::cos(th);
  return r;
}

P3 unit(P3 v) {
  const double l = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  for (double& x : v) x /= l;
  return v;
}

}  // namespace

std::array<double, 3> ellipsoid_lv_fibre(const EllipsoidLvSpec& s, double t, double th, double ph) {
  const double d = 1e-6;
  P3 c, l;
  const P3 p0 = position(s, t, th, ph), pc = position(s, t, th, ph + d), pl = position(s, t, th + d, ph);
  for (int a = 0; a < 3; ++a) c[a] = pc[a] - p0[a], l[a] = pl[a] - p0[a];
  c = unit(c);
  // l̂ ⟂ ĉ within the wall's surface (they are orthogonal on a surface of revolution only
  // when ax = ay; project to be sure).
  const double cl = c[0] * l[0] + c[1] * l[1] + c[2] * l[2];
  for (int a = 0; a < 3; ++a) l[a] -= cl * c[a];
  l = unit(l);
  const double alpha = (s.helix_endo + (s.helix_epi - s.helix_endo) * t) * std::numbers::pi / 180;
  return {std::cos(alpha) * c[0] + std::sin(alpha) * l[0], std::cos(alpha) * c[1] + std::sin(alpha) * l[1],
          std::cos(alpha) * c[2] + std::sin(alpha) * l[2]};
}

io::UnstructuredMesh ellipsoid_lv_mesh(const EllipsoidLvSpec& s) {
  io::UnstructuredMesh m;
  m.units = "mm";
  m.source = "ellipsoid LV";
  const int nt = s.layers, nr = s.rings, ns = s.sectors;
  const double th0 = s.apex_hole_deg * std::numbers::pi / 180, th1 = std::numbers::pi / 2;
  auto theta = [&](double r) { return th0 + (th1 - th0) * r / nr; };
  auto phi = [&](double q) { return 2 * std::numbers::pi * q / ns; };
  auto id = [&](int t, int r, int q) { return std::int32_t(t + (nt + 1) * (r + (nr + 1) * (q % ns))); };
  m.points.resize(std::size_t(nt + 1) * (nr + 1) * ns);
  m.point_fibres.resize(m.points.size());
  for (int q = 0; q < ns; ++q)
    for (int r = 0; r <= nr; ++r)
      for (int t = 0; t <= nt; ++t) {
        m.points[id(t, r, q)] = position(s, double(t) / nt, theta(r), phi(q));
        m.point_fibres[id(t, r, q)] = ellipsoid_lv_fibre(s, double(t) / nt, theta(r), phi(q));
      }
  // Kuhn: the 6 tets of a cube around its diagonal 000–111, one per order of the axes.
  static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int q = 0; q < ns; ++q)
    for (int r = 0; r < nr; ++r)
      for (int t = 0; t < nt; ++t)
        for (const auto& p : perms) {
          int c[3] = {0, 0, 0};
          std::array<std::int32_t, 4> tet{};
          tet[0] = id(t, r, q);
          for (int k = 0; k < 3; ++k) {
            c[p[k]] = 1;
            tet[k + 1] = id(t + c[0], r + c[1], q + c[2]);
          }
          // Kuhn tets alternate in orientation with the parity of the permutation: swap two
          // nodes of the odd ones so all agree.
          const bool odd = (p[0] == 0 && p[1] == 2) || (p[0] == 1 && p[1] == 0) || (p[0] == 2 && p[1] == 1);
          if (odd) std::swap(tet[2], tet[3]);
          m.tets.push_back(tet);
          const double tc = (t + 0.5) / nt;
          m.tet_tags.push_back(tc < 1.0 / 3 ? 1 : tc < 2.0 / 3 ? 2 : 3);
          m.tet_fibres.push_back(ellipsoid_lv_fibre(s, tc, theta(r + 0.5), phi(q + 0.5)));
        }
  return m;
}

}  // namespace hw::tissue
