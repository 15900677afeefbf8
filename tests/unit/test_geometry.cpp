// Tissue geometry: shapes against analytic volumes, the phase field's profile, rule-based
// fibres against the analytic shell directions, the row layout against the stencil,
// build_geometry's errors, and the shared hearts (skipped when ../shared is absent).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "core/error.hpp"
#include "formats/nrrd.hpp"
#include "tissue/case.hpp"
#include "tissue/diffusion.hpp"
#include "mesh/fibres_rule_based.hpp"
#include "mesh/geometry.hpp"
#include "mesh/phase_field.hpp"
#include "mesh/row_layout.hpp"
#include "mesh/shapes.hpp"

namespace fs = std::filesystem;
using namespace hw::tissue;

namespace {

const double pi = std::acos(-1.0);

Grid cube(int n, double h) {
  Grid g;
  g.n = {n, n, n};
  g.h = {h, h, h};
  return g;
}

std::size_t count(const Mask& m) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < m.size(); ++i) c += m[i] != 0;
  return c;
}

std::string shared_geometry(const std::string& rel) {
  return std::string(HW_SHARED_DIR) + "/geometry/" + rel;
}

TissueCase shell_case() {
  TissueCase c;
  c.grid = cube(48, 0.5);
  c.geometry.kind = GeometrySpec::Kind::ellipsoid_shell;
  c.geometry.centre = {12, 12, 12};
  c.geometry.radii_outer = {10, 10, 11};
  c.geometry.radii_inner = {6, 6, 7};
  c.geometry.loc = {"case.toml", 7, 1};
  c.fibres.loc = {"case.toml", 20, 1};
  return c;
}

template <class F>
void expect_input_error(F&& f, int line, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << "no error: " << what;
  } catch (const hw::InputError& e) {
    EXPECT_EQ(e.diagnostics().front().loc.file, "case.toml") << e.what();
    EXPECT_EQ(e.diagnostics().front().loc.line, line) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << "expected '" << what << "' in: " << e.what();
  }
}

}  // namespace

TEST(GeometryShapes, EllipsoidShellVolumeAndLabels) {
  const TissueCase c = shell_case();
  const Geometry geo = build_geometry(c);
  const double vol = count(geo.mask) * c.grid.cell_volume();
  const double exact = 4.0 / 3.0 * pi * (10 * 10 * 11 - 6 * 6 * 7);
  std::printf("[measured] ellipsoid shell volume %.2f mm^3, analytic %.2f (%.2f%%)\n", vol, exact,
              100 * (vol / exact - 1));
  EXPECT_NEAR(vol / exact, 1.0, 0.02);
  std::size_t epi = 0, endo = 0;
  for (std::size_t n = 0; n < geo.labels.size(); ++n) {
    epi += geo.labels[n] == label_epi;
    endo += geo.labels[n] == label_lv_endo;
    if (geo.labels[n] != 0) EXPECT_TRUE(geo.mask[n]);
  }
  // Surface cells ≈ area / h² (a loose check: the staircase has more faces than the area).
  EXPECT_GT(epi, endo);
  EXPECT_GT(endo, 4 * pi * 36 / 0.25 * 0.5);
  EXPECT_FALSE(geo.fibres.has_value());
}

TEST(GeometryShapes, SlabWithHole) {
  TissueCase c;
  c.grid = cube(40, 0.25);
  c.grid.n[2] = 4;
  c.geometry.kind = GeometrySpec::Kind::slab_with_hole;
  c.geometry.centre = {5, 5, 0};
  c.geometry.hole_radius = 2;
  const Geometry geo = build_geometry(c);
  const double hole = (c.grid.size() - count(geo.mask)) * c.grid.cell_volume();
  EXPECT_NEAR(hole / (pi * 4 * 1.0), 1.0, 0.05);  // a staircase circle of radius 8 cells
  std::size_t rim = 0;
  for (std::size_t n = 0; n < geo.labels.size(); ++n) rim += geo.labels[n] == label_lv_endo;
  EXPECT_NEAR(double(rim) / 4, 2 * pi * 2 / 0.25, 0.35 * 2 * pi * 2 / 0.25);  // per layer ≈ circumference / h
}

TEST(GeometryPhaseField, ProfileOneInsideZeroOutsideHalfAtBoundary) {
  const Grid g = cube(40, 1.0);
  Mask m(g, 0);
  const double r = 12.0;
  for (int k = 0; k < 40; ++k)
    for (int j = 0; j < 40; ++j)
      for (int i = 0; i < 40; ++i) {
        const double x = i + 0.5 - 20, y = j + 0.5 - 20, z = k + 0.5 - 20;
        m[g.index(i, j, k)] = x * x + y * y + z * z <= r * r;
      }
  const Field<float> phi = phase_field_from_mask(g, m, 0.5);
  EXPECT_GT(phi[g.index(20, 20, 20)], 0.999f);
  EXPECT_LT(phi[g.index(1, 1, 1)], 0.001f);
  // Along +x from the centre, φ crosses ½ within one voxel of the sphere's radius.
  double cross = -1;
  for (int i = 20; i < 39; ++i) {
    const double a = phi[g.index(i, 19, 19)], b = phi[g.index(i + 1, 19, 19)];
    if (a >= 0.5 && b < 0.5) cross = (i + 0.5) + (a - 0.5) / (a - b) - 20;
  }
  const double boundary = std::sqrt(r * r - 2 * 0.25);  // the ray runs half a cell off the axis
  std::printf("[measured] phase field 0.5 crossing at %.3f, boundary %.3f voxels\n", cross, boundary);
  EXPECT_NEAR(cross, boundary, 1.0);
  for (std::size_t n = 0; n < phi.size(); ++n) {
    ASSERT_GE(phi[n], 0.0f);
    ASSERT_LE(phi[n], 1.0f);
  }
}

TEST(GeometryPhaseField, ScaledConductivityAndRateBound) {
  TissueCase c = shell_case();
  c.grid = cube(24, 1.0);
  c.geometry.radii_outer = {10, 10, 11};
  c.geometry.phase_field = true;
  const Geometry geo = build_geometry(c);
  ASSERT_EQ(geo.phase.size(), geo.grid.size());
  const PhaseFieldDiffusion d = phase_field_diffusion(geo.grid, geo.phase, Conductivity::isotropic(0.1), 0.0);
  EXPECT_EQ(count(d.mask), count(geo.mask));
  for (std::size_t n = 0; n < geo.grid.size(); n += 7)
    EXPECT_NEAR(d.sigma.get(xx, n), 0.1 * (geo.mask[n] ? geo.phase[n] : 0.0f), 1e-7);
  // The bound must cover the spectral radius of Φ⁻¹L; power iteration estimates it.
  const double bound = phase_field_rate_bound(geo.grid, d);
  auto op = make_diffusion_operator({geo.grid, d.sigma, d.mask, StencilOrder::second}, Backend::reference);
  Field<double> v(geo.grid, 0.0), w(geo.grid, 0.0);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::size_t n = 0; n < v.size(); ++n) v[n] = d.mask[n] ? u(rng) : 0.0;
  double lambda = 0;
  for (int it = 0; it < 200; ++it) {
    op->apply(v, w);
    double norm = 0;
    for (std::size_t n = 0; n < v.size(); ++n) {
      w[n] = d.mask[n] ? w[n] / d.phi[n] : 0.0;
      norm = std::max(norm, std::abs(w[n]));
    }
    lambda = norm;
    for (std::size_t n = 0; n < v.size(); ++n) v[n] = w[n] / norm;
  }
  const double bulk = 0.1 * 12.0;  // Gershgorin of the 7-point Laplacian with σ = 0.1, h = 1
  std::printf("[measured] phase-field rate: power iteration %.3f, bound %.3f, bulk bound %.3f\n", lambda, bound, bulk);
  EXPECT_GE(bound, lambda * 0.999);
  EXPECT_LE(bound, 2.0 * bulk + 1e-12);
}

TEST(GeometryFibres, DistanceTransformIsExact) {
  Grid g;
  g.n = {17, 9, 6};
  g.h = {0.5, 0.7, 1.1};
  Field<std::uint8_t> seed(g, 0);
  std::mt19937 rng(5);
  std::vector<std::size_t> seeds;
  for (int s = 0; s < 5; ++s) {
    const std::size_t n = rng() % g.size();
    seed[n] = 1;
    seeds.push_back(n);
  }
  const Field<double> d = distance_transform(g, seed);
  double worst = 0;
  for (int k = 0; k < 6; ++k)
    for (int j = 0; j < 9; ++j)
      for (int i = 0; i < 17; ++i) {
        double best = 1e300;
        for (std::size_t n : seeds) {
          const int si = int(n % 17), sj = int((n / 17) % 9), sk = int(n / (17 * 9));
          best = std::min(best, std::hypot((i - si) * 0.5, (j - sj) * 0.7, (k - sk) * 1.1));
        }
        worst = std::max(worst, std::abs(best - d[g.index(i, j, k)]));
      }
  EXPECT_LT(worst, 1e-12);
}

TEST(GeometryFibres, RotatingAlongAnyAxisMatchesRotatingThroughZ) {
  Grid g = cube(5, 1.0);
  const FibreField a = rotating_fibres(g, 2, 60, -60), b = FibreField::rotating_through_z(g, 60, -60);
  for (int c = 0; c < 3; ++c)
    for (std::size_t n = 0; n < g.size(); ++n) EXPECT_NEAR(a.f[c][n], b.f[c][n], 1e-14);
  const FibreField x = rotating_fibres(g, 0, 0, 90);  // in the y-z plane, from +y to +z
  EXPECT_NEAR(x.f[1][g.index(0, 2, 2)], 1.0, 1e-14);
  EXPECT_NEAR(x.f[2][g.index(4, 2, 2)], 1.0, 1e-14);
  EXPECT_EQ(x.f[0][g.index(2, 2, 2)], 0.0);
}

TEST(GeometryFibres, RuleBasedOnEllipsoidShell) {
  TissueCase c = shell_case();
  c.geometry.radii_outer = {10, 10, 10};
  c.geometry.radii_inner = {6, 6, 6};
  c.fibres.kind = FibreSpec::Kind::rule_based;
  c.fibres.angle_from = 60;
  c.fibres.angle_to = -60;
  c.fibres.long_axis = std::array<double, 3>{0, 0, 1};  // a sphere has no long axis of its own
  const Geometry geo = build_geometry(c);
  ASSERT_TRUE(geo.fibres.has_value());
  const Grid& g = geo.grid;
  // Compare with the sphere's analytic directions: n = r̂, c = n × z, helix angle linear
  // in the radius from 6 mm (endo) to 10 mm (epi). Cells near the poles are skipped.
  double worst_len = 0, worst_perp = 0, worst_angle = 0;
  double endo_angle = 0, epi_angle = 0, sum_err2 = 0;
  int n_endo = 0, n_epi = 0, n_mid = 0;
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const std::size_t n = g.index(i, j, k);
        if (!geo.mask[n]) continue;
        const std::array<double, 3> f{geo.fibres->f[0][n], geo.fibres->f[1][n], geo.fibres->f[2][n]};
        worst_len = std::max(worst_len, std::abs(std::hypot(f[0], f[1], f[2]) - 1));
        std::array<double, 3> r{g.centre(0, i) - 12, g.centre(1, j) - 12, g.centre(2, k) - 12};
        const double rad = std::hypot(r[0], r[1], r[2]);
        for (double& x : r) x /= rad;
        if (std::abs(r[2]) > 0.7) continue;
        const double perp = std::abs(f[0] * r[0] + f[1] * r[1] + f[2] * r[2]);
        std::array<double, 3> cc{r[1], -r[0], 0};  // r̂ × z
        const double cl = std::hypot(cc[0], cc[1]);
        for (double& x : cc) x /= cl;
        const std::array<double, 3> b{r[1] * cc[2] - r[2] * cc[1], r[2] * cc[0] - r[0] * cc[2],
                                      r[0] * cc[1] - r[1] * cc[0]};
        const double ang = std::atan2(f[0] * b[0] + f[1] * b[1] + f[2] * b[2], f[0] * cc[0] + f[1] * cc[1]) * 180 / pi;
        const double e = std::clamp((rad - 6.0) / 4.0, 0.0, 1.0);
        if (geo.labels[n] == label_lv_endo) endo_angle += ang, ++n_endo;
        if (geo.labels[n] == label_epi) epi_angle += ang, ++n_epi;
        // Mid-wall, away from the surfaces' staircase.
        if (rad > 6.75 && rad < 9.25) {
          const double err = std::abs(ang - (60 - 120 * e));
          worst_angle = std::max(worst_angle, err);
          worst_perp = std::max(worst_perp, perp);
          sum_err2 += err * err;
          ++n_mid;
        }
      }
  endo_angle /= n_endo;
  epi_angle /= n_epi;
  std::printf("[measured] rule-based fibres on a sphere shell: |f|-1 %.1e, max |f.r| %.3f, mean angle endo %.2f "
              "epi %.2f deg, mid-wall angle error max %.2f rms %.2f deg\n", worst_len, worst_perp, endo_angle, epi_angle, worst_angle,
              std::sqrt(sum_err2 / n_mid));
  EXPECT_LT(worst_len, 1e-12);
  // The numerical transmural direction follows the staircase surfaces of an 8-cell wall:
  // a few degrees rms from the analytic one, up to ~15° at worst.
  EXPECT_LT(worst_perp, 0.4);
  EXPECT_NEAR(endo_angle, 60, 3);
  EXPECT_NEAR(epi_angle, -60, 3);
  EXPECT_LT(std::sqrt(sum_err2 / n_mid), 6);
  EXPECT_LT(worst_angle, 20);
  // And the tensor builds (sheet normal = transmural direction).
  ASSERT_TRUE(geo.fibres->s.has_value());
  double worst_fs = 0;  // f ⟂ the numerical transmural direction s = ∇e/|∇e|, exactly
  for (std::size_t n = 0; n < g.size(); ++n)
    if (geo.mask[n]) {
      double d = 0;
      for (int a = 0; a < 3; ++a) d += geo.fibres->f[a][n] * (*geo.fibres->s)[a][n];
      worst_fs = std::max(worst_fs, std::abs(d));
    }
  EXPECT_LT(worst_fs, 1e-12);
  EXPECT_NO_THROW(Conductivity::from_fibres(g, *geo.fibres, {0.13, 0.018, 0.005}, &geo.mask));
}

namespace {

// Every stencil neighbour (faces and the 12 edge diagonals) of every tissue cell is stored,
// rows are stored one after another with no overlap, and a box stays the identity layout.
void expect_layout_closed_under_the_stencil(const Grid& g, const Mask& m, const char* what) {
  const RowLayout L = row_layout(g, m);
  std::size_t at = L.pad;
  for (std::size_t r = 0; r < L.rows(); ++r) {
    if (L.lo[r] < L.hi[r]) EXPECT_EQ(L.first(r), at) << what << " row " << r;
    EXPECT_GE(L.base[r] + L.lo[r], L.lo[r]) << what;  // base ≥ 0: no pointer before the array
    at += L.hi[r] - L.lo[r];
  }
  EXPECT_EQ(at, L.size()) << what;
  std::size_t missing = 0;
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        if (!m[g.index(i, j, k)]) continue;
        for (int dk = -1; dk <= 1; ++dk)
          for (int dj = -1; dj <= 1; ++dj)
            for (int di = -1; di <= 1; ++di) {
              if (std::abs(di) + std::abs(dj) + std::abs(dk) == 3) continue;  // corners: no link
              const int ii = g.neighbour(0, i, di == 0 ? 0 : di), jj = g.neighbour(1, j, dj),
                        kk = g.neighbour(2, k, dk);
              if ((di && ii < 0) || (dj && jj < 0) || (dk && kk < 0)) continue;
              missing += !L.holds(g.index(di ? ii : i, dj ? jj : j, dk ? kk : k));
            }
      }
  EXPECT_EQ(missing, 0u) << what;
  std::size_t tissue = 0;
  for (std::size_t n = 0; n < m.size(); ++n) tissue += m[n] != 0;
  std::printf("[measured] row layout, %s: %zu tissue cells, %zu stored (%.1f%% of the box)\n", what,
              tissue, L.size(), 100.0 * double(L.size()) / double(g.size()));
}

}  // namespace

TEST(GeometryRowLayout, StoresTheStencilReachOfEveryTissueCell) {
  Grid g;
  g.n = {37, 24, 19};
  g.bc = {Boundary::no_flux, Boundary::periodic, Boundary::no_flux};
  Mask m(g, 0);
  // A thick spherical shell: rows of very different extents, some empty.
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const double r = std::hypot((i - 18.0) / 14, (j - 11.5) / 9, (k - 9.0) / 7);
        m[g.index(i, j, k)] = r > 0.6 && r < 1.0;
      }
  expect_layout_closed_under_the_stencil(g, m, "shell, periodic y");
  EXPECT_FALSE(row_layout(g, m).box);
  EXPECT_LT(row_layout(g, m).size(), g.size());
  g.bc = {Boundary::periodic, Boundary::no_flux, Boundary::periodic};
  expect_layout_closed_under_the_stencil(g, m, "shell, periodic x and z");
  Mask sparse(g, 0);
  std::mt19937 rng(11);
  for (std::size_t n = 0; n < sparse.size(); ++n) sparse[n] = (rng() % 100) < 3;
  expect_layout_closed_under_the_stencil(g, sparse, "3% random cells, periodic x and z");
  // A box: no mask, or a mask of all tissue, is stored as the grid.
  EXPECT_TRUE(row_layout(g, Mask()).box);
  EXPECT_TRUE(row_layout(g, Mask(g, 1)).box);
  EXPECT_EQ(row_layout(g, Mask(g, 1)).size(), g.size());
  EXPECT_EQ(row_layout(g, Mask()).index(g.index(5, 6, 7)), g.index(5, 6, 7));
  EXPECT_THROW(row_layout(g, Mask(10, 1)), hw::Error);
}

namespace {

// The share of the box that 8³ bricks holding tissue would store (seed 001's blockDS), for
// comparison with the row layout.
double brick_fraction(const Grid& g, const Mask& m, int b) {
  const int bx = (g.nx() + b - 1) / b, by = (g.ny() + b - 1) / b, bz = (g.nz() + b - 1) / b;
  std::vector<char> any(std::size_t(bx) * by * bz, 0);
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i)
        if (m[g.index(i, j, k)]) any[(std::size_t(k / b) * by + j / b) * bx + i / b] = 1;
  std::size_t active = 0;
  for (char a : any) active += a;
  return double(active) * b * b * b / double(g.size());
}

}  // namespace

TEST(GeometryBuild, ErrorsNameTheCaseKey) {
  {
    TissueCase c = shell_case();
    c.geometry.kind = GeometrySpec::Kind::mask_file;
    c.geometry.path = "/nonexistent/heart.nrrd";
    expect_input_error([&] { build_geometry(c); }, 7, "not found");
    c.geometry.path = "";
    expect_input_error([&] { build_geometry(c); }, 7, "geometry.file is required");
  }
  {
    TissueCase c = shell_case();
    c.geometry.radii_inner = {6, 12, 7};
    expect_input_error([&] { build_geometry(c); }, 7, "radii_inner[1]");
    c.geometry.radii_inner = {6, 6, 7};
    c.geometry.centre = {100, 100, 100};
    expect_input_error([&] { build_geometry(c); }, 7, "no tissue");
  }
  {
    TissueCase c;
    c.grid = cube(8, 1);
    c.fibres.kind = FibreSpec::Kind::rule_based;
    c.fibres.loc = {"case.toml", 20, 1};
    expect_input_error([&] { build_geometry(c); }, 20, "endocardial and epicardial surfaces");
    c.fibres.kind = FibreSpec::Kind::uniform;
    c.fibres.direction = {0, 0, 0};
    expect_input_error([&] { build_geometry(c); }, 20, "non-zero");
    c.fibres.kind = FibreSpec::Kind::rotating;
    c.fibres.axis = 3;
    expect_input_error([&] { build_geometry(c); }, 20, "fibres.axis");
    c.grid.n = {100000, 100000, 1000};
    c.geometry.kind = GeometrySpec::Kind::slab_with_hole;
    c.geometry.hole_radius = 1;
    c.geometry.loc = {"case.toml", 7, 1};
    expect_input_error([&] { build_geometry(c); }, 7, "too large");
  }
  {
    // A mask file whose threshold leaves nothing; a fibre file of the wrong size; a bad
    // image keeps its own file:line after the case's.
    const fs::path dir = fs::temp_directory_path() / ("hw_geom_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    hw::io::ImageVolume img;
    img.sizes = {4, 3, 2};
    img.set_values(hw::io::ScalarType::u8, std::vector<double>(24, 1.0));
    hw::io::write_nrrd((dir / "m.nrrd").string(), img);
    TissueCase c;
    c.source_file = (dir / "case.toml").string();
    c.geometry.kind = GeometrySpec::Kind::mask_file;
    c.geometry.path = "m.nrrd";
    c.geometry.loc = {"case.toml", 7, 1};
    c.geometry.threshold = 3;
    expect_input_error([&] { build_geometry(c); }, 7, "leaves no tissue");
    c.geometry.threshold = 0.5;
    EXPECT_EQ(build_geometry(c).grid.n, img.sizes);
    img.components = 3;
    img.sizes = {4, 3, 3};
    img.set_values(hw::io::ScalarType::f32, std::vector<double>(36 * 3, 1.0));
    hw::io::write_nrrd((dir / "f.nrrd").string(), img);
    c.fibres.kind = FibreSpec::Kind::file;
    c.fibres.path = "f.nrrd";
    c.fibres.loc = {"case.toml", 20, 1};
    expect_input_error([&] { build_geometry(c); }, 20, "4×3×3");
    std::ofstream(dir / "bad.nrrd") << "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 4 3\n";
    c.geometry.path = "bad.nrrd";
    try {
      build_geometry(c);
      ADD_FAILURE();
    } catch (const hw::InputError& e) {
      ASSERT_EQ(e.diagnostics().size(), 2u);
      EXPECT_EQ(e.diagnostics()[0].loc.line, 7);
      EXPECT_EQ(e.diagnostics()[1].loc.line, 4);
    }
    fs::remove_all(dir);
  }
}

TEST(GeometryShared, PigAndFentonRabbitPhaseFields) {
  for (auto [rel, fill, h] : {std::tuple{"pig_ventricles_kaboudian128/pig_ventricles_128.nrrd", 0.269, 0.4797},
                              std::tuple{"rabbit_ventricles_fenton/rabbit_ventricles_128.nrrd", 0.232, 0.2836}}) {
    const std::string path = shared_geometry(rel);
    if (!fs::exists(path)) GTEST_SKIP() << "shared geometry not found: " << path;
    TissueCase c;
    c.geometry.kind = GeometrySpec::Kind::phase_field_file;
    c.geometry.path = path;
    c.geometry.threshold = 2.5 / 255;  // the Abubu app's φ > 0.01 on φ·255 data
    c.geometry.phase_field = true;
    const Geometry geo = build_geometry(c);
    EXPECT_EQ(geo.grid.n, (std::array<int, 3>{128, 128, 128}));
    EXPECT_NEAR(geo.grid.h[0], h, 1e-3);
    const double frac = double(count(geo.mask)) / geo.grid.size();
    const RowLayout rows = row_layout(geo.grid, geo.mask);
    const double stored = double(rows.size()) / geo.grid.size();
    const double b8 = brick_fraction(geo.grid, geo.mask, 8), b4 = brick_fraction(geo.grid, geo.mask, 4);
    std::printf("[measured] %s: %d×%d×%d, h %.4f×%.4f×%.4f mm, tissue %.2f%% of box; row layout stores "
                "%.1f%% of box (8³ bricks would store %.1f%%, 4³ bricks %.1f%%)\n",
                rel, geo.grid.n[0], geo.grid.n[1], geo.grid.n[2], geo.grid.h[0], geo.grid.h[1], geo.grid.h[2],
                100 * frac, 100 * stored, 100 * b8, 100 * b4);
    EXPECT_NEAR(frac, fill, 0.005);
    EXPECT_GT(stored, frac);
    EXPECT_LT(stored, 1.6 * frac);  // storage follows the tissue
    EXPECT_LT(stored, b8);
    float pmax = 0;
    for (std::size_t n = 0; n < geo.phase.size(); ++n) pmax = std::max(pmax, geo.phase[n]);
    EXPECT_FLOAT_EQ(pmax, 1.0f);
  }
}

// geometry.spacing: the pig phase field at 0.25 mm, the resolution of the heart it was made
// from (seed 001's 250×326×298 box, 27% tissue, 6.5 M cells): the same fill and extent.
TEST(GeometryShared, PigPhaseFieldResampledToQuarterMillimetre) {
  const std::string path = shared_geometry("pig_ventricles_kaboudian128/pig_ventricles_128.nrrd");
  if (!fs::exists(path)) GTEST_SKIP() << "shared geometry not found: " << path;
  TissueCase c;
  c.geometry.kind = GeometrySpec::Kind::phase_field_file;
  c.geometry.path = path;
  c.geometry.threshold = 2.5 / 255;
  c.geometry.phase_field = true;
  const Geometry coarse = build_geometry(c);
  c.geometry.spacing = {0.25, 0.25, 0.25};
  const Geometry geo = build_geometry(c);
  const std::size_t tissue = count(geo.mask);
  const double frac = double(tissue) / geo.grid.size();
  std::printf("[measured] pig phase field at 0.25 mm: %d×%d×%d, %zu tissue cells (%.2f%% of box; 128³: %.2f%%)\n",
              geo.grid.n[0], geo.grid.n[1], geo.grid.n[2], tissue, 100 * frac,
              100.0 * double(count(coarse.mask)) / coarse.grid.size());
  for (int a = 0; a < 3; ++a) {
    EXPECT_DOUBLE_EQ(geo.grid.h[a], 0.25);
    EXPECT_NEAR(geo.grid.n[a] * 0.25, coarse.grid.n[a] * coarse.grid.h[a], 0.25);
  }
  // Interpolated φ crosses the low threshold (0.01) up to a fine voxel beyond the coarse
  // boundary, so the fill grows by about a fine voxel's shell: 26.9% → 28.9%.
  EXPECT_NEAR(frac, double(count(coarse.mask)) / coarse.grid.size(), 0.025);
  EXPECT_GT(tissue, 6000000u);
  EXPECT_LT(tissue, 7000000u);
}

TEST(GeometryShared, UcsdRabbitLabelsAndRuleBasedFibres) {
  const std::string path = shared_geometry("rabbit_ventricles_ucsd_chaste/ucsd_rabbit_ventricles_0.25mm.nrrd");
  if (!fs::exists(path)) GTEST_SKIP() << "shared geometry not found: " << path;
  TissueCase c;
  c.geometry.kind = GeometrySpec::Kind::mask_file;
  c.geometry.path = path;
  c.fibres.kind = FibreSpec::Kind::rule_based;
  c.fibres.long_axis = std::array<double, 3>{1, 0, 0};  // the UCSD rabbit's long axis is roughly x
  const Geometry geo = build_geometry(c);
  EXPECT_EQ(geo.grid.n, (std::array<int, 3>{137, 121, 114}));
  EXPECT_DOUBLE_EQ(geo.grid.h[0], 0.25);
  ASSERT_EQ(geo.labels.size(), geo.grid.size());
  std::array<std::size_t, 5> per_label{};
  for (std::size_t n = 0; n < geo.labels.size(); ++n) {
    ASSERT_GE(geo.labels[n], 0);
    ASSERT_LE(geo.labels[n], 4);
    ++per_label[geo.labels[n]];
  }
  const double frac = double(count(geo.mask)) / geo.grid.size();
  const double vol_cm3 = count(geo.mask) * geo.grid.cell_volume() / 1000;
  const double stored = double(row_layout(geo.grid, geo.mask).size()) / geo.grid.size();
  std::printf("[measured] UCSD rabbit 0.25 mm: tissue %.2f%% of box, %.3f cm^3, labels myo/epi/LV/RV %zu/%zu/%zu/%zu, "
              "row layout %.1f%% of box (8³ bricks %.1f%%)\n", 100 * frac, vol_cm3, per_label[1], per_label[2],
              per_label[3], per_label[4], 100 * stored, 100 * brick_fraction(geo.grid, geo.mask, 8));
  EXPECT_LT(stored, 1.6 * frac);
  EXPECT_NEAR(frac, 0.224, 0.005);
  EXPECT_NEAR(vol_cm3, 6.60, 0.05);
  for (int l = 1; l <= 4; ++l) EXPECT_GT(per_label[l], 1000u) << "label " << l;
  ASSERT_TRUE(geo.fibres.has_value());
  std::size_t bad = 0;
  for (std::size_t n = 0; n < geo.grid.size(); ++n) {
    if (!geo.mask[n]) continue;
    const double l = std::hypot(geo.fibres->f[0][n], geo.fibres->f[1][n], geo.fibres->f[2][n]);
    bad += std::abs(l - 1) > 1e-9;
  }
  EXPECT_EQ(bad, 0u);
}
