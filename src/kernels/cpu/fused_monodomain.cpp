// Row bodies of the cpu diffusion kernels for the fused monodomain step (see the header).
// Rows outside a no-flux wall are replaced by the cell's own row (values) and a zero row
// (coefficients), exactly as in diffusion.cpp, so the x loop has no tests.
#include "kernels/cpu/fused_monodomain.hpp"

#include <algorithm>

#include "kernels/stencil_k.hpp"

namespace hw::kernels::cpu {

template <class Real>
void diffusion2_uniform_row(const tissue::Grid& g, const std::array<double, 3>& w, int j, int k,
                            const Real* v, Real* o, Real alpha, Real beta) {
  const int nx = g.nx();
  const Real wx = Real(w[0]), wy = Real(w[1]), wz = Real(w[2]);
  const bool perx = g.bc[0] == tissue::Boundary::periodic;
  const Real* v0 = v + g.index(0, j, k);
  const int jp = g.neighbour(1, j, 1), jm = g.neighbour(1, j, -1);
  const int kp = g.neighbour(2, k, 1), km = g.neighbour(2, k, -1);
  const Real* vyp = jp < 0 ? v0 : v + g.index(0, jp, k);
  const Real* vym = jm < 0 ? v0 : v + g.index(0, jm, k);
  const Real* vzp = kp < 0 ? v0 : v + g.index(0, j, kp);
  const Real* vzm = km < 0 ? v0 : v + g.index(0, j, km);
  auto cell = [&](int i, int ip, int im) {
    const Real c = v0[i];
    o[i] = diffused(uniform_laplacian(wx, wy, wz, c, v0[ip], v0[im], vyp[i], vym[i], vzp[i], vzm[i]),
                    c, alpha, beta);
  };
  if (nx == 1) {
    cell(0, 0, 0);
    return;
  }
  cell(0, 1, perx ? nx - 1 : 0);
#pragma omp simd
  for (int i = 1; i < nx - 1; ++i) cell(i, i + 1, i - 1);
  cell(nx - 1, perx ? 0 : nx - 1, nx - 2);
}

template <class Real, class Coef>
void diffusion2_links_row(const tissue::Grid& g, const tissue::RowLayout& layout,
                          const LinkCoeffs<Coef>& cf, int j, int k, const Real* v, Real* o,
                          Real alpha, Real beta, int lo, int hi) {
  if (lo >= hi) return;
  const int nx = g.nx(), ny = g.ny();
  const bool perx = g.bc[0] == tissue::Boundary::periodic;
  const Coef* zero = cf.zero_row.data();
  auto base = [&](int jj, int kk) { return layout.base[std::size_t(jj) + std::size_t(ny) * kk]; };
  const Real* v0 = v + base(j, k);
  const int jp = g.neighbour(1, j, 1), jm = g.neighbour(1, j, -1);
  const int kp = g.neighbour(2, k, 1), km = g.neighbour(2, k, -1);
  auto vrow = [&](int jj, int kk) -> const Real* {
    return (jj < 0 || kk < 0) ? v0 : v + base(jj, kk);
  };  // vrow(j, k) is v0
  auto crow = [&](const std::vector<Coef>& f, int jj, int kk) -> const Coef* {
    return (f.empty() || jj < 0 || kk < 0) ? zero : f.data() + base(jj, kk);
  };
  const auto rows = link_rows<Real, Coef>(vrow, crow, cf.face.data(), cf.edge.data(), j, k, jp, jm, kp, km);
  auto cell = [&](int i, int ip, int im, Real mm) {
    o[i] = diffused(links_laplacian(rows, i, ip, im, mm), v0[i], alpha, beta);
  };
  if (nx == 1) {
    cell(0, 0, 0, Real(0));
    return;
  }
  if (lo == 0) cell(0, 1, perx ? nx - 1 : 0, perx ? Real(1) : Real(0));
  const int i_end = std::min(hi, nx - 1);
#pragma omp simd
  for (int i = std::max(lo, 1); i < i_end; ++i) cell(i, i + 1, i - 1, Real(1));
  if (hi == nx) cell(nx - 1, perx ? 0 : nx - 1, nx - 2, Real(1));
}

template void diffusion2_uniform_row<float>(const tissue::Grid&, const std::array<double, 3>&, int,
                                            int, const float*, float*, float, float);
template void diffusion2_uniform_row<double>(const tissue::Grid&, const std::array<double, 3>&,
                                             int, int, const double*, double*, double, double);
template void diffusion2_links_row<float, float>(const tissue::Grid&, const tissue::RowLayout&,
                                                 const LinkCoeffs<float>&, int, int, const float*,
                                                 float*, float, float, int, int);
template void diffusion2_links_row<float, double>(const tissue::Grid&, const tissue::RowLayout&,
                                                  const LinkCoeffs<double>&, int, int,
                                                  const float*, float*, float, float, int, int);
template void diffusion2_links_row<double, double>(const tissue::Grid&, const tissue::RowLayout&,
                                                   const LinkCoeffs<double>&, int, int,
                                                   const double*, double*, double, double, int,
                                                   int);

}  // namespace hw::kernels::cpu
