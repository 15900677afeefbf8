// Builds per-voxel conductivity tensors; see conductivity.hpp for the formula and units.
#include "mesh/conductivity.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::tissue {

FibreField FibreField::uniform(const Grid& g, std::array<double, 3> f) {
  FibreField r;
  for (int a = 0; a < 3; ++a) r.f[a] = Field<double>(g, f[a]);
  return r;
}

FibreField FibreField::rotating_through_z(const Grid& g, double angle_bottom_deg,
                                          double angle_top_deg) {
  FibreField r;
  for (int a = 0; a < 3; ++a) r.f[a] = Field<double>(g, 0.0);
  const double pi = std::acos(-1.0);
  for (int k = 0; k < g.nz(); ++k) {
    const double s = g.nz() > 1 ? double(k) / (g.nz() - 1) : 0.0;
    const double ang = (angle_bottom_deg + s * (angle_top_deg - angle_bottom_deg)) * pi / 180.0;
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const std::size_t n = g.index(i, j, k);
        r.f[0][n] = std::cos(ang);
        r.f[1][n] = std::sin(ang);
      }
  }
  return r;
}

Conductivity Conductivity::isotropic(double sigma) {
  Conductivity c;
  c.uniform_ = {sigma, sigma, sigma, 0, 0, 0};
  return c;
}

Conductivity Conductivity::isotropic(const Grid& g, Field<double> sigma) {
  if (sigma.size() != g.size())
    throw Error(fmt::format("conductivity: sigma field has {} values, the grid {} cells",
                            sigma.size(), g.size()));
  Conductivity c;
  c.per_voxel_ = true;
  c.comps_[xx] = sigma;
  c.comps_[yy] = sigma;
  c.comps_[zz] = std::move(sigma);
  for (int k = 3; k < 6; ++k) c.comps_[k] = Field<double>(g, 0.0);
  return c;
}

Conductivity Conductivity::uniform_tensor(std::array<double, 6> t) {
  Conductivity c;
  c.uniform_ = t;
  c.off_diagonal_ = t[xy] != 0.0 || t[xz] != 0.0 || t[yz] != 0.0;
  return c;
}

Conductivity Conductivity::from_fibres(const Grid& g, const FibreField& fib,
                                       const FibreConductivities& cs, const Mask* mask) {
  for (int a = 0; a < 3; ++a)
    if (fib.f[a].size() != g.size() || (fib.s && (*fib.s)[a].size() != g.size()))
      throw Error("conductivity: fibre field size does not match the grid");
  const double sl = cs.sigma_l, st = cs.sigma_t, sn = cs.sigma_n.value_or(cs.sigma_t);
  Conductivity c;
  c.per_voxel_ = true;
  for (int k = 0; k < 6; ++k) c.comps_[k] = Field<double>(g, 0.0);
  for (std::size_t n = 0; n < g.size(); ++n) {
    std::array<double, 3> f{fib.f[0][n], fib.f[1][n], fib.f[2][n]};
    const double fl = std::sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    if (!(fl > 0.0) || !std::isfinite(fl)) {
      if (!is_tissue(mask, n)) continue;
      throw Error(fmt::format("conductivity: fibre vector at cell {} has length {}", n, fl));
    }
    for (double& x : f) x /= fl;
    std::array<double, 3> s{0, 0, 0};
    if (fib.s) {
      s = {(*fib.s)[0][n], (*fib.s)[1][n], (*fib.s)[2][n]};
      const double slen = std::sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
      if (slen > 0.0)
        for (double& x : s) x /= slen;
    }
    for (int a = 0; a < 3; ++a)
      for (int b = a; b < 3; ++b) {
        const double v = (a == b ? st : 0.0) + (sl - st) * f[a] * f[b] + (sn - st) * s[a] * s[b];
        c.comps_[tensor_comp(a, b)][n] = v;
        if (a != b && v != 0.0) c.off_diagonal_ = true;
      }
  }
  return c;
}

Conductivity Conductivity::scaled(const Grid& g, const Field<double>& factor) const {
  if (factor.size() != g.size())
    throw Error(fmt::format("conductivity: scale field has {} values, the grid {} cells",
                            factor.size(), g.size()));
  if (per_voxel_)
    for (int k = 0; k < 6; ++k)
      if (comps_[k].size() != g.size())
        throw Error("conductivity: per-voxel tensor size does not match the grid");
  Conductivity c;
  c.per_voxel_ = true;
  for (int k = 0; k < 6; ++k) {
    c.comps_[k] = Field<double>(g, 0.0);
    for (std::size_t n = 0; n < g.size(); ++n) {
      const double v = factor[n] * get(k, n);
      c.comps_[k][n] = v;
      if (k >= 3 && v != 0.0) c.off_diagonal_ = true;
    }
  }
  return c;
}

void Conductivity::validate(const Grid& g) const {
  if (per_voxel_) {
    for (int k = 0; k < 6; ++k)
      if (comps_[k].size() != g.size())
        throw Error("conductivity: per-voxel tensor size does not match the grid");
    for (std::size_t n = 0; n < g.size(); ++n)
      for (int a = 0; a < 3; ++a)
        if (!(comps_[a][n] >= 0.0) || !std::isfinite(comps_[a][n]))
          throw Error(fmt::format("conductivity: sigma_{}{} = {} mS/mm at cell {} must be >= 0",
                                  "xyz"[a], "xyz"[a], comps_[a][n], n));
  } else {
    for (int a = 0; a < 3; ++a)
      if (!(uniform_[a] >= 0.0) || !std::isfinite(uniform_[a]))
        throw Error(fmt::format("conductivity: sigma_{}{} = {} mS/mm must be >= 0", "xyz"[a],
                                "xyz"[a], uniform_[a]));
  }
}

}  // namespace hw::tissue
