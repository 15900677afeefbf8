// Diffusion operators: cpu vs reference on awkward data, symmetry and conservation,
// reductions, manufactured-solution convergence orders, the stability limit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>

#include "core/error.hpp"
#include "test_tissue_util.hpp"
#include "tissue/diffusion.hpp"
#include "tissue/diffusion_stepper.hpp"
#include "mesh/row_layout.hpp"

namespace hw::tissue {
namespace {

using testing::make_grid;
using testing::max_abs;
using testing::random_field;
using testing::random_mask;
using testing::random_tensor;
constexpr Boundary NF = Boundary::no_flux;
constexpr Boundary PER = Boundary::periodic;
const double kPi = std::acos(-1.0);

// Compares the cpu backend with the reference on one setup, in double and in float.
void expect_cpu_matches_reference(const DiffusionSetup& s, double alpha, double beta,
                                  const char* what) {
  auto ref = make_diffusion_operator(s, Backend::reference);
  auto cpu = make_diffusion_operator(s, Backend::cpu);
  const Field<double> v = random_field(s.grid, 7);
  Field<double> r, c;
  ref->apply(v, r, alpha, beta);
  cpu->apply(v, c, alpha, beta);
  // Scale of the terms summed per cell: bound·max|v|·|α| + |β|·max|v|.
  const double scale = (ref->spectral_bound() * std::fabs(alpha) + std::fabs(beta)) * max_abs(v);
  double err = 0.0;
  for (std::size_t n = 0; n < v.size(); ++n) err = std::max(err, std::fabs(r[n] - c[n]));
  EXPECT_LE(err, 1e-14 * scale) << what << " (double)";

  Field<float> vf(v.size()), cf;
  for (std::size_t n = 0; n < v.size(); ++n) vf[n] = static_cast<float>(v[n]);
  Field<double> vfd(v.size());
  for (std::size_t n = 0; n < v.size(); ++n) vfd[n] = vf[n];
  ref->apply(vfd, r, alpha, beta);
  cpu->apply(vf, cf, float(alpha), float(beta));
  double errf = 0.0;
  for (std::size_t n = 0; n < v.size(); ++n) errf = std::max(errf, std::fabs(r[n] - cf[n]));
  EXPECT_LE(errf, 2e-6 * scale) << what << " (float)";
  std::printf("[measured] cpu vs reference, %s: max error / scale = %.2e (double), %.2e (float)\n",
              what, err / scale, errf / scale);
  EXPECT_GT(max_abs(r), 0.0) << what;
}

TEST(TissueDiffusion, CpuMatchesReferenceOnAwkwardSetups) {
  {  // 3D, random fibres + sheets, random mask, mixed periodic / no-flux, unequal spacing
    DiffusionSetup s;
    s.grid = make_grid(37, 23, 11, 0.1, 0.13, 0.2, PER, NF, PER);
    s.mask = random_mask(s.grid, 3, 0.8);
    s.sigma = random_tensor(s.grid, 5, &s.mask);
    expect_cpu_matches_reference(s, 1.0, 0.0, "3D aniso mask periodic x,z");
    expect_cpu_matches_reference(s, 0.3, 0.7, "3D aniso mask alpha/beta");
  }
  {  // 3D anisotropic, box, all no-flux
    DiffusionSetup s;
    s.grid = make_grid(37, 23, 11, 0.1, 0.1, 0.1, NF, NF, NF);
    s.sigma = random_tensor(s.grid, 9);
    expect_cpu_matches_reference(s, 1.0, 0.0, "3D aniso box");
  }
  {  // 2D anisotropic (9-point), periodic y only
    DiffusionSetup s;
    s.grid = make_grid(37, 23, 1, 0.1, 0.2, 1.0, NF, PER, NF);
    s.sigma = random_tensor(s.grid, 11);
    s.mask = random_mask(s.grid, 12, 0.9);
    expect_cpu_matches_reference(s, 1.0, 0.0, "2D aniso mask");
  }
  {  // varying isotropic σ (some zero), 3D mask
    DiffusionSetup s;
    s.grid = make_grid(37, 23, 11, 0.1, 0.1, 0.15, NF, PER, NF);
    Field<double> sig = random_field(s.grid, 13, 0.0, 0.3);
    for (std::size_t n = 0; n < sig.size(); n += 17) sig[n] = 0.0;
    s.sigma = Conductivity::isotropic(s.grid, sig);
    s.mask = random_mask(s.grid, 14, 0.85);
    expect_cpu_matches_reference(s, 1.0, 0.0, "varying iso sigma");
  }
  {  // uniform isotropic: the cpu fast path
    DiffusionSetup s;
    s.grid = make_grid(37, 23, 11, 0.1, 0.12, 0.3, PER, NF, NF);
    s.sigma = Conductivity::isotropic(0.17);
    expect_cpu_matches_reference(s, 1.0, 0.0, "uniform iso 3D");
    expect_cpu_matches_reference(s, -0.02, 1.0, "uniform iso 3D alpha/beta");
  }
  {  // 1D cables, periodic (a ring) and no-flux
    DiffusionSetup s;
    s.grid = make_grid(37, 1, 1, 0.1, 1, 1, PER, NF, NF);
    s.sigma = Conductivity::isotropic(0.1);
    expect_cpu_matches_reference(s, 1.0, 0.0, "1D ring");
    s.grid.bc[0] = NF;
    expect_cpu_matches_reference(s, 1.0, 0.0, "1D cable");
  }
  {  // tiny periodic axes (n = 2: two faces to the same neighbour)
    DiffusionSetup s;
    s.grid = make_grid(2, 5, 2, 0.1, 0.1, 0.1, PER, NF, PER);
    s.sigma = random_tensor(s.grid, 15);
    expect_cpu_matches_reference(s, 1.0, 0.0, "n=2 periodic");
  }
  {  // fourth order, mixed boundaries
    DiffusionSetup s;
    s.grid = make_grid(37, 23, 11, 0.1, 0.13, 0.2, PER, NF, NF);
    s.sigma = Conductivity::isotropic(0.2);
    s.order = StencilOrder::fourth;
    expect_cpu_matches_reference(s, 1.0, 0.0, "fourth order");
    expect_cpu_matches_reference(s, 0.5, 2.0, "fourth order alpha/beta");
  }
}

namespace {

// A mask that leaves most rows short or empty: a thick ellipsoidal shell in the box.
Mask shell_mask(const Grid& g) {
  Mask m(g, 0);
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const double r = std::hypot((i + 0.5 - 0.5 * g.nx()) / (0.45 * g.nx()),
                                    (j + 0.5 - 0.5 * g.ny()) / (0.45 * g.ny()),
                                    g.nz() > 1 ? (k + 0.5 - 0.5 * g.nz()) / (0.45 * g.nz()) : 0.0);
        m[g.index(i, j, k)] = r > 0.55 && r < 1.0;
      }
  return m;
}

// The cpu operator on compressed rows (row_layout) against the reference on the box, at
// every stored cell; its diagonal and bound too.
void expect_row_layout_matches_reference(DiffusionSetup s, double alpha, double beta,
                                         const char* what) {
  auto ref = make_diffusion_operator(s, Backend::reference);
  s.layout = row_layout(s.grid, s.mask);
  const RowLayout& L = s.layout;
  ASSERT_FALSE(L.box) << what;
  auto cpu = make_diffusion_operator(s, Backend::cpu);
  EXPECT_EQ(cpu->spectral_bound(), ref->spectral_bound()) << what;
  const Field<double> v = random_field(s.grid, 7);
  Field<double> vs(L.size(), 0.0);
  for (std::size_t n = 0; n < v.size(); ++n)
    if (L.holds(n)) vs[L.index(n)] = v[n];
  Field<double> r, c;
  ref->apply(v, r, alpha, beta);
  cpu->apply(vs, c, alpha, beta);
  Field<float> vf(L.size()), cf;
  for (std::size_t q = 0; q < L.size(); ++q) vf[q] = float(vs[q]);
  cpu->apply(vf, cf, float(alpha), float(beta));
  const double scale = (ref->spectral_bound() * std::fabs(alpha) + std::fabs(beta)) * max_abs(v);
  double err = 0, errf = 0, derr = 0;
  std::size_t stored = 0;
  for (std::size_t n = 0; n < v.size(); ++n) {
    if (!L.holds(n)) continue;
    ++stored;
    err = std::max(err, std::fabs(r[n] - c[L.index(n)]));
    errf = std::max(errf, std::fabs(r[n] - cf[L.index(n)]));
    derr = std::max(derr, std::fabs(ref->diagonal()[n] - cpu->diagonal()[L.index(n)]));
  }
  EXPECT_LE(err, 1e-14 * scale) << what;
  EXPECT_LE(errf, 2e-6 * scale) << what;
  EXPECT_EQ(derr, 0.0) << what;
  EXPECT_EQ(stored + L.pad, L.size()) << what;
  std::printf("[measured] cpu on compressed rows (%.1f%% of the box) vs reference on the box, %s: "
              "max error / scale = %.2e (double), %.2e (float)\n",
              100.0 * double(L.size()) / double(s.grid.size()), what, err / scale, errf / scale);
}

}  // namespace

TEST(TissueDiffusion, CompressedRowsMatchTheReferenceOnTheBox) {
  {  // 3D shell, random fibres + sheets (19-point), periodic x and z
    DiffusionSetup s;
    s.grid = make_grid(31, 23, 17, 0.1, 0.13, 0.2, PER, NF, PER);
    s.mask = shell_mask(s.grid);
    s.sigma = random_tensor(s.grid, 5, &s.mask);
    expect_row_layout_matches_reference(s, 1.0, 0.0, "3D shell, aniso, periodic x,z");
    expect_row_layout_matches_reference(s, 0.3, 0.7, "3D shell, aniso, alpha/beta");
  }
  {  // 3D shell, varying isotropic σ, all no-flux
    DiffusionSetup s;
    s.grid = make_grid(29, 25, 21, 0.1, 0.1, 0.1, NF, NF, NF);
    s.mask = shell_mask(s.grid);
    s.sigma = Conductivity::isotropic(s.grid, random_field(s.grid, 13, 0.0, 0.3));
    expect_row_layout_matches_reference(s, 1.0, 0.0, "3D shell, varying iso sigma");
  }
  {  // 2D annulus, oblique fibres (9-point), periodic y
    DiffusionSetup s;
    s.grid = make_grid(41, 33, 1, 0.1, 0.2, 1.0, NF, PER, NF);
    s.mask = shell_mask(s.grid);
    s.sigma = random_tensor(s.grid, 11);
    expect_row_layout_matches_reference(s, 1.0, 0.0, "2D annulus, aniso");
  }
  {  // sparse random cells: many rows stored in short pieces
    DiffusionSetup s;
    s.grid = make_grid(37, 23, 11, 0.1, 0.13, 0.2, NF, PER, NF);
    s.mask = random_mask(s.grid, 3, 0.02);
    s.sigma = random_tensor(s.grid, 5, &s.mask);
    expect_row_layout_matches_reference(s, 1.0, 0.0, "2% random cells");
  }
  {  // the reference backend refuses a compressed layout
    DiffusionSetup s;
    s.grid = make_grid(31, 23, 17, 0.1, 0.1, 0.1, NF, NF, NF);
    s.mask = shell_mask(s.grid);
    s.sigma = Conductivity::isotropic(0.1);
    s.layout = row_layout(s.grid, s.mask);
    EXPECT_THROW(make_diffusion_operator(s, Backend::reference), Error);
  }
}

TEST(TissueDiffusion, OperatorIsSymmetricAndConservative) {
  std::vector<DiffusionSetup> setups(3);
  setups[0].grid = make_grid(17, 13, 9, 0.1, 0.13, 0.2, NF, NF, NF);
  setups[0].mask = random_mask(setups[0].grid, 21, 0.75);
  setups[0].sigma = random_tensor(setups[0].grid, 22, &setups[0].mask);
  setups[1].grid = make_grid(17, 13, 9, 0.1, 0.13, 0.2, PER, NF, PER);
  setups[1].sigma = random_tensor(setups[1].grid, 23);
  setups[2].grid = make_grid(17, 13, 9, 0.1, 0.13, 0.2, NF, PER, NF);
  setups[2].sigma = Conductivity::isotropic(0.1);
  setups[2].order = StencilOrder::fourth;
  for (std::size_t c = 0; c < setups.size(); ++c)
    for (Backend b : {Backend::reference, Backend::cpu}) {
      auto op = make_diffusion_operator(setups[c], b);
      const Field<double> u = random_field(op->grid(), 31), v = random_field(op->grid(), 32);
      Field<double> lu, lv;
      op->apply(u, lu);
      op->apply(v, lv);
      const double a = testing::dot(u, lv), bb = testing::dot(lu, v);
      const double scale = std::sqrt(testing::dot(u, u) * testing::dot(lv, lv));
      std::printf("[measured] symmetry setup %zu %s: |<u,Lv>-<Lu,v>|/(|u||Lv|) = %.2e\n", c,
                  backend_name(b), std::fabs(a - bb) / scale);
      EXPECT_LE(std::fabs(a - bb), 1e-13 * scale) << "setup " << c;
      // 1ᵀ L v = 0: no charge created; L 1 = 0: constants are steady.
      double abs_sum = 0.0;
      for (std::size_t n = 0; n < lv.size(); ++n) abs_sum += std::fabs(lv[n]);
      EXPECT_LE(std::fabs(testing::sum(lv)), 1e-13 * abs_sum) << "setup " << c;
      Field<double> one(op->grid(), 1.0), l1;
      op->apply(one, l1);
      EXPECT_LE(max_abs(l1), 1e-12 * op->spectral_bound()) << "setup " << c;
      // ⟨v, L v⟩ ≤ 0 (CG needs I − θ·a·L positive definite).
      EXPECT_LE(testing::dot(v, lv), 1e-12 * scale) << "setup " << c;
      // Masked cells do not change.
      if (!setups[c].mask.empty())
        for (std::size_t n = 0; n < lv.size(); ++n)
          if (!setups[c].mask[n]) {
            ASSERT_EQ(lv[n], 0.0);
          }
    }
}

TEST(TissueDiffusion, FibresAlongXReduceToAxisConductivities) {
  const Grid g = make_grid(19, 15, 7, 0.1, 0.12, 0.15, NF, PER, NF);
  const double sl = 0.3, st = 0.05;
  DiffusionSetup a, b;
  a.grid = b.grid = g;
  a.mask = b.mask = random_mask(g, 41, 0.8);
  a.sigma = Conductivity::from_fibres(g, FibreField::uniform(g, {2.0, 0.0, 0.0}), {sl, st, {}});
  b.sigma = Conductivity::uniform_tensor({sl, st, st, 0, 0, 0});
  EXPECT_FALSE(a.sigma.has_off_diagonal());
  const Field<double> v = random_field(g, 42);
  for (Backend be : {Backend::reference, Backend::cpu}) {
    Field<double> la, lb;
    make_diffusion_operator(a, be)->apply(v, la);
    make_diffusion_operator(b, be)->apply(v, lb);
    double err = 0.0;
    for (std::size_t n = 0; n < v.size(); ++n) err = std::max(err, std::fabs(la[n] - lb[n]));
    EXPECT_LE(err, 1e-13 * max_abs(lb)) << backend_name(be);
  }
  // And both equal σ_l δ²_x + σ_t (δ²_y + δ²_z) written out by hand, away from the mask.
  Field<double> lb;
  b.mask = Mask();
  make_diffusion_operator(b, Backend::reference)->apply(v, lb);
  const int i = 5, j = 0, k = 3;  // j = 0 wraps on the periodic y axis
  auto V = [&](int ii, int jj, int kk) { return v[g.index(ii, (jj + 15) % 15, kk)]; };
  const double hand = sl * (V(i + 1, j, k) - 2 * V(i, j, k) + V(i - 1, j, k)) / (0.1 * 0.1) +
                      st * (V(i, j + 1, k) - 2 * V(i, j, k) + V(i, j - 1, k)) / (0.12 * 0.12) +
                      st * (V(i, j, k + 1) - 2 * V(i, j, k) + V(i, j, k - 1)) / (0.15 * 0.15);
  EXPECT_NEAR(lb[g.index(i, j, k)], hand, 1e-12 * std::fabs(hand));
}

// Max-norm truncation error of L on a smooth field against the exact ∇·(σ∇V), on an N³
// (or N²) grid of a fixed physical box.
using ExactFn = std::function<double(double, double, double)>;
double truncation_error(int N, bool threed, const std::array<double, 3>& len,
                        std::array<Boundary, 3> bc, StencilOrder order,
                        const std::function<Conductivity(const Grid&)>& sigma, const ExactFn& v,
                        const ExactFn& lv) {
  DiffusionSetup s;
  s.grid = make_grid(N, N, threed ? N : 1, len[0] / N, len[1] / N, threed ? len[2] / N : 1.0,
                     bc[0], bc[1], bc[2]);
  s.sigma = sigma(s.grid);
  s.order = order;
  auto op = make_diffusion_operator(s, Backend::cpu);
  const Grid& g = s.grid;
  Field<double> f(g), out;
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i)
        f[g.index(i, j, k)] = v(g.centre(0, i), g.centre(1, j), threed ? g.centre(2, k) : 0.0);
  op->apply(f, out);
  double err = 0.0;
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i)
        err = std::max(err, std::fabs(out[g.index(i, j, k)] -
                                      lv(g.centre(0, i), g.centre(1, j),
                                         threed ? g.centre(2, k) : 0.0)));
  return err;
}

// Orders log2(e_N / e_2N) for N in ns.
std::vector<double> orders(const char* name, const std::vector<int>& ns,
                           const std::function<double(int)>& err) {
  std::vector<double> e, p;
  for (int n : ns) e.push_back(err(n));
  std::printf("[measured] %s:", name);
  for (std::size_t q = 0; q < ns.size(); ++q) std::printf(" N=%d err=%.3e", ns[q], e[q]);
  for (std::size_t q = 1; q < e.size(); ++q) p.push_back(std::log2(e[q - 1] / e[q]));
  std::printf(" | orders");
  for (double x : p) std::printf(" %.3f", x);
  std::printf("\n");
  return p;
}

TEST(TissueDiffusion, SecondOrderStencilConvergesAtOrderTwo) {
  const std::array<double, 3> L{1.0, 0.7, 0.5};
  // V = cos(πx/Lx)cos(πy/Ly)cos(πz/Lz) has zero normal derivative on every wall;
  // σ = 1 + 0.25(x/Lx + y/Ly + z/Lz) varies in space.
  auto v = [&](double x, double y, double z) {
    return std::cos(kPi * x / L[0]) * std::cos(kPi * y / L[1]) * std::cos(kPi * z / L[2]);
  };
  auto sig = [&](double x, double y, double z) {
    return 1.0 + 0.25 * (x / L[0] + y / L[1] + z / L[2]);
  };
  auto make_sigma = [&](bool threed) {
    return [&, threed](const Grid& g) {
      Field<double> s(g);
      for (int k = 0; k < g.nz(); ++k)
        for (int j = 0; j < g.ny(); ++j)
          for (int i = 0; i < g.nx(); ++i)
            s[g.index(i, j, k)] =
                sig(g.centre(0, i), g.centre(1, j), threed ? g.centre(2, k) : 0.0);
      return Conductivity::isotropic(g, s);
    };
  };
  auto lv = [&](bool threed) {
    return [&, threed](double x, double y, double z) {
      const double kx = kPi / L[0], ky = kPi / L[1], kz = threed ? kPi / L[2] : 0.0;
      const double cx = std::cos(kx * x), cy = std::cos(ky * y), cz = std::cos(kz * z);
      const double sx = std::sin(kx * x), sy = std::sin(ky * y), sz = std::sin(kz * z);
      const double lap = -(kx * kx + ky * ky + kz * kz) * cx * cy * cz;
      const double gs_dot_gv = 0.25 / L[0] * (-kx * sx * cy * cz) +
                               0.25 / L[1] * (-ky * cx * sy * cz) +
                               (threed ? 0.25 / L[2] * (-kz * cx * cy * sz) : 0.0);
      return sig(x, y, z) * lap + gs_dot_gv;
    };
  };
  const std::array<Boundary, 3> nf{NF, NF, NF};
  auto p2 = orders("5-point varying sigma, no-flux", {16, 32, 64, 128}, [&](int n) {
    return truncation_error(n, false, L, nf, StencilOrder::second, make_sigma(false),
                            [&](double x, double y, double) { return v(x, y, 0.0); }, lv(false));
  });
  auto p3 = orders("7-point varying sigma, no-flux", {12, 24, 48}, [&](int n) {
    return truncation_error(n, true, L, nf, StencilOrder::second, make_sigma(true), v, lv(true));
  });
  for (double p : p2) EXPECT_NEAR(p, 2.0, 0.15);
  for (double p : p3) EXPECT_NEAR(p, 2.0, 0.15);
}

TEST(TissueDiffusion, FourthOrderStencilConvergesAtOrderFour) {
  const std::array<double, 3> L{1.0, 0.7, 0.5};
  const double sigma = 0.3;
  auto v = [&](double x, double y, double z) {
    return std::cos(kPi * x / L[0]) * std::sin(2 * kPi * y / L[1]) * std::cos(2 * kPi * z / L[2]);
  };
  auto lv = [&](double x, double y, double z) {
    const double k2 = std::pow(kPi / L[0], 2) + std::pow(2 * kPi / L[1], 2) +
                      std::pow(2 * kPi / L[2], 2);
    return -sigma * k2 * v(x, y, z);
  };
  // x, z no-flux (the cosines are even about the walls: the mirror is exact), y periodic.
  auto p4 = orders("4th-order 13-point, no-flux x,z / periodic y", {16, 32, 64}, [&](int n) {
    return truncation_error(
        n, true, L, {NF, PER, NF}, StencilOrder::fourth,
        [&](const Grid&) { return Conductivity::isotropic(sigma); }, v, lv);
  });
  for (double p : p4) EXPECT_NEAR(p, 4.0, 0.2);
  auto p2 = orders("7-point same field", {16, 32, 64}, [&](int n) {
    return truncation_error(
        n, true, L, {NF, PER, NF}, StencilOrder::second,
        [&](const Grid&) { return Conductivity::isotropic(sigma); }, v, lv);
  });
  for (double p : p2) EXPECT_NEAR(p, 2.0, 0.15);
}

TEST(TissueDiffusion, AnisotropicStencilConvergesAtOrderTwoOnPeriodicBoxes) {
  const std::array<double, 3> L{1.0, 0.8, 0.6};
  const double sl = 0.3, st = 0.05, sn = 0.02;
  const double kx = 2 * kPi / L[0], ky = 2 * kPi / L[1], kz = 2 * kPi / L[2];
  // 2D, 9-point: fibre angle θ(x) = 0.5 + 0.3 sin(kx x) varies, so σ_xx, σ_xy vary in x.
  auto theta = [&](double x) { return 0.5 + 0.3 * std::sin(kx * x); };
  auto dtheta = [&](double x) { return 0.3 * kx * std::cos(kx * x); };
  auto v2 = [&](double x, double y, double) { return std::sin(kx * x) * std::cos(ky * y) + 0.5 * std::cos(kx * x + ky * y); };
  auto lv2 = [&](double x, double y, double) {
    const double th = theta(x), d = sl - st;
    const double sxx = st + d * std::cos(th) * std::cos(th), syy = st + d * std::sin(th) * std::sin(th);
    const double sxy = d * std::sin(th) * std::cos(th);
    const double dsxx = -d * std::sin(2 * th) * dtheta(x), dsxy = d * std::cos(2 * th) * dtheta(x);
    const double vx = kx * std::cos(kx * x) * std::cos(ky * y) - 0.5 * kx * std::sin(kx * x + ky * y);
    const double vy = -ky * std::sin(kx * x) * std::sin(ky * y) - 0.5 * ky * std::sin(kx * x + ky * y);
    const double vxx = -kx * kx * std::sin(kx * x) * std::cos(ky * y) - 0.5 * kx * kx * std::cos(kx * x + ky * y);
    const double vyy = -ky * ky * std::sin(kx * x) * std::cos(ky * y) - 0.5 * ky * ky * std::cos(kx * x + ky * y);
    const double vxy = -kx * ky * std::cos(kx * x) * std::sin(ky * y) - 0.5 * kx * ky * std::cos(kx * x + ky * y);
    return sxx * vxx + 2 * sxy * vxy + syy * vyy + dsxx * vx + dsxy * vy;
  };
  auto sigma2 = [&](const Grid& g) {
    FibreField fib = FibreField::uniform(g, {1, 0, 0});
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        fib.f[0][g.index(i, j, 0)] = std::cos(theta(g.centre(0, i)));
        fib.f[1][g.index(i, j, 0)] = std::sin(theta(g.centre(0, i)));
      }
    return Conductivity::from_fibres(g, fib, {sl, st, {}});
  };
  auto p9 = orders("9-point, fibre angle varying in x, periodic", {16, 32, 64, 128}, [&](int n) {
    return truncation_error(n, false, L, {PER, PER, PER}, StencilOrder::second, sigma2, v2, lv2);
  });
  for (double p : p9) EXPECT_NEAR(p, 2.0, 0.15);
  // 3D, 19-point: a constant orthotropic tensor with no zero component.
  const double ang = 0.6;
  const std::array<double, 3> f{std::cos(ang) * std::cos(0.3), std::sin(ang) * std::cos(0.3),
                                std::sin(0.3)};
  const std::array<double, 3> sh{-std::sin(ang), std::cos(ang), 0.0};
  auto sigma3 = [&](const Grid& g) {
    FibreField fib = FibreField::uniform(g, f);
    std::array<Field<double>, 3> s{Field<double>(g, sh[0]), Field<double>(g, sh[1]),
                                   Field<double>(g, sh[2])};
    fib.s = s;
    return Conductivity::from_fibres(g, fib, {sl, st, sn});
  };
  auto v3 = [&](double x, double y, double z) { return std::sin(kx * x + ky * y) * std::cos(kz * z + kx * x); };
  auto lv3 = [&](double x, double y, double z) {
    double S[3][3];
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        S[a][b] = (a == b ? st : 0.0) + (sl - st) * f[a] * f[b] + (sn - st) * sh[a] * sh[b];
    // v = sin(p)cos(q), p = kx x + ky y, q = kz z + kx x: ∂a∂b v by the product rule.
    const double kp[3] = {kx, ky, 0.0}, kq[3] = {kx, 0.0, kz};
    const double p = kx * x + ky * y, q = kz * z + kx * x;
    double r = 0.0;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) {
        const double d2 = -(kp[a] * kp[b] + kq[a] * kq[b]) * std::sin(p) * std::cos(q) -
                          (kp[a] * kq[b] + kq[a] * kp[b]) * std::cos(p) * std::sin(q);
        r += S[a][b] * d2;
      }
    return r;
  };
  auto p19 = orders("19-point, constant orthotropic tensor, periodic", {16, 32, 64}, [&](int n) {
    return truncation_error(n, true, L, {PER, PER, PER}, StencilOrder::second, sigma3, v3, lv3);
  });
  for (double p : p19) EXPECT_NEAR(p, 2.0, 0.15);
}

TEST(TissueDiffusion, ExplicitStabilityLimitIsEnforcedAndSharp) {
  DiffusionSetup s;
  s.grid = make_grid(16, 12, 1, 0.1, 0.2, 1.0, PER, PER, NF);
  s.sigma = Conductivity::isotropic(0.15);
  auto op = make_diffusion_operator(s, Backend::cpu);
  const double chi = 140.0, cm = 0.01;
  // Even periodic grid, constant σ: the checkerboard mode makes the bound exact.
  const double lambda = 4 * 0.15 / 0.01 + 4 * 0.15 / 0.04;
  EXPECT_NEAR(op->spectral_bound(), lambda, 1e-12 * lambda);
  const double lim = explicit_dt_limit(*op, chi, cm);
  EXPECT_NEAR(lim, 2 * chi * cm / lambda, 1e-15);
  EXPECT_NO_THROW(check_explicit_dt(*op, chi, cm, 0.999 * lim));
  try {
    check_explicit_dt(*op, chi, cm, 1.01 * lim, SourceLoc{"case.toml", 12, 3});
    FAIL() << "dt above the limit was accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("dt_max"), std::string::npos) << msg;
    EXPECT_NE(msg.find("case.toml:12:3"), std::string::npos) << msg;
  }
  EXPECT_THROW(DiffusionStepper<double>(*op, chi, cm, 1.01 * lim, DiffusionScheme::forward_euler),
               InputError);
  EXPECT_THROW(check_explicit_dt(*op, chi, cm, -1.0), InputError);
  // The limit is sharp: just below it a checkerboard decays, just above it grows.
  auto run = [&](double dt) {
    Field<double> v(s.grid);
    for (int j = 0; j < 12; ++j)
      for (int i = 0; i < 16; ++i) v[s.grid.index(i, j, 0)] = ((i + j) % 2 ? 1.0 : -1.0);
    Field<double> w;
    // forward Euler by hand, past the check: V += a·L V
    for (int n = 0; n < 200; ++n) {
      op->apply(v, w, dt / (chi * cm), 1.0);
      std::swap(v, w);
    }
    return max_abs(v);
  };
  EXPECT_LT(run(0.99 * lim), 1.0);
  EXPECT_GT(run(1.01 * lim), 1.0);
}

TEST(TissueDiffusion, BadSetupsAreRejected) {
  DiffusionSetup s;
  s.grid = make_grid(5, 5, 1, 0.1, -0.1, 1, NF, NF, NF);
  s.sigma = Conductivity::isotropic(0.1);
  EXPECT_THROW(make_diffusion_operator(s, Backend::cpu), Error);
  s.grid.h[1] = 0.1;
  s.mask = Mask(7);
  EXPECT_THROW(make_diffusion_operator(s, Backend::cpu), Error);
  s.mask = Mask(s.grid, 1);
  s.order = StencilOrder::fourth;
  EXPECT_THROW(make_diffusion_operator(s, Backend::cpu), Error);  // mask with fourth order
  s.mask = Mask();
  s.sigma = Conductivity::isotropic(-0.1);
  EXPECT_THROW(make_diffusion_operator(s, Backend::reference), Error);
  s.sigma = Conductivity::isotropic(0.1);
  EXPECT_THROW(make_diffusion_operator(s, Backend::cuda), Error);
}

}  // namespace
}  // namespace hw::tissue
