// Endocardial and epicardial surfaces found from a heart's shape (mesh/cavities.*), against
// shapes whose surfaces are known: a truncated prolate shell (one cavity, open at the top
// wall), two shells side by side with walls of different thickness (which is the LV), the
// same shell tilted (the centre line follows the cavity), a solid block (no cavity: a clear
// error), and the pig ventricles from ../shared (skipped when absent) built into fibres and
// coordinates through a case with no labels.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "mesh/cavities.hpp"
#include "mesh/geometry.hpp"
#include "mesh/shapes.hpp"
#include "tissue/case.hpp"

using namespace hw::tissue;

namespace {

Grid grid(std::array<int, 3> n, double h) {
  Grid g;
  g.n = n;
  g.h = {h, h, h};
  return g;
}

// q < 1 inside the ellipsoid of radii r about c, for cell centres.
double q_of(const Grid& g, int i, int j, int k, std::array<double, 3> c, std::array<double, 3> r) {
  const double x = (g.centre(0, i) - c[0]) / r[0], y = (g.centre(1, j) - c[1]) / r[1],
               z = (g.centre(2, k) - c[2]) / r[2];
  return x * x + y * y + z * z;
}

TEST(Cavities, TruncatedShellHasItsEndocardiumAndItsBaseAtTheOpenEnd) {
  // Prolate shell along z, centre on the top wall: the upper half is cut off (the base).
  const Grid g = grid({32, 32, 48}, 0.5);
  const ShapeVolume shell = ellipsoid_shell(g, {8, 8, 24}, {7, 7, 20}, {4, 4, 17});
  const FoundSurfaces f = find_surfaces(g, shell.mask);
  EXPECT_EQ(f.slice_axis, 2);
  EXPECT_EQ(f.base_side, +1);
  EXPECT_EQ(f.cavity_cells[1], 0u);  // one cavity
  EXPECT_GT(f.open_cells[1], 0u);
  EXPECT_EQ(f.open_cells[0], 0u);    // capped at the apex
  EXPECT_NEAR(f.centre_line[2], 1.0, 1e-9);
  // Every cell the shape calls endocardial is found so, apart from the rim on the top wall
  // (the shape calls a cell touching both surfaces epi; here the cavity wins).
  std::size_t shape_endo = 0, agree = 0, found_endo = 0;
  for (std::size_t n = 0; n < g.size(); ++n) {
    if (!shell.mask[n]) continue;
    found_endo += f.labels[n] == label_lv_endo;
    if (shell.labels[n] == label_lv_endo) ++shape_endo, agree += f.labels[n] == label_lv_endo;
    if (shell.labels[n] == label_myocardium) EXPECT_EQ(f.labels[n], label_myocardium) << n;
  }
  EXPECT_GT(shape_endo, 500u);
  EXPECT_EQ(agree, shape_endo);
  EXPECT_LE(found_endo - shape_endo, std::size_t(0.05 * shape_endo));
  // The wall: 3 mm at the equator, thicker at the apex: the median lies between.
  EXPECT_GT(f.wall_mm[0], 2.5);
  EXPECT_LT(f.wall_mm[0], 3.5);
}

TEST(Cavities, TheThickerWalledCavityIsTheLeftVentricle) {
  // Two truncated shells side by side along x: a thick-walled one (wall 4 mm) at x = 12,
  // a thin-walled one (wall 1.5 mm) at x = 30; they do not touch. Listed either way
  // round, the thick one comes out as the LV.
  const Grid g = grid({84, 40, 56}, 0.5);
  for (bool thick_first : {true, false}) {
    const std::array<double, 3> thick_c{thick_first ? 11.0 : 30.0, 10, 28}, thin_c{thick_first ? 30.0 : 11.0, 10, 28};
    Mask m(g, 0);
    for (int k = 0; k < g.nz(); ++k)
      for (int j = 0; j < g.ny(); ++j)
        for (int i = 0; i < g.nx(); ++i) {
          const bool thick = q_of(g, i, j, k, thick_c, {9, 9, 24}) <= 1 && q_of(g, i, j, k, thick_c, {5, 5, 20}) > 1;
          const bool thin = q_of(g, i, j, k, thin_c, {8, 8, 23}) <= 1 && q_of(g, i, j, k, thin_c, {6.5, 6.5, 21.5}) > 1;
          m[g.index(i, j, k)] = thick || thin;
        }
    const FoundSurfaces f = find_surfaces(g, m);
    ASSERT_GT(f.cavity_cells[1], 0u) << f.describe();
    EXPECT_GT(f.wall_mm[0], f.wall_mm[1]) << f.describe();
    // Each endocardial label lies on the shell it belongs to.
    for (int k = 0; k < g.nz(); ++k)
      for (int j = 0; j < g.ny(); ++j)
        for (int i = 0; i < g.nx(); ++i) {
          const std::int16_t l = f.labels[g.index(i, j, k)];
          const double x = g.centre(0, i);
          if (l == label_lv_endo) EXPECT_NEAR(x, thick_c[0], 9.5);
          if (l == label_rv_endo) EXPECT_NEAR(x, thin_c[0], 8.5);
        }
    EXPECT_EQ(f.base_side, +1);
  }
}

TEST(Cavities, TheCentreLineFollowsATiltedCavity) {
  // The shell's long axis tilted 15° from z towards y, its apex near z = 0; slices across
  // z still ring the cavity, and the line through their centroids has the tilt.
  const Grid g = grid({40, 56, 52}, 0.5);
  const double t = 15 * std::acos(-1.0) / 180, c0 = std::cos(t), s0 = std::sin(t);
  const std::array<double, 3> centre{10, 14, 26};
  Mask m(g, 0);
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        // Coordinates in the shell's frame: w along the tilted axis.
        const double x = g.centre(0, i) - centre[0], y = g.centre(1, j) - centre[1], z = g.centre(2, k) - centre[2];
        const double v = c0 * y - s0 * z, w = s0 * y + c0 * z;
        const double qo = (x * x + v * v) / 49 + w * w / 400, qi = (x * x + v * v) / 16 + w * w / 289;
        m[g.index(i, j, k)] = qo <= 1 && qi > 1;
      }
  const FoundSurfaces f = find_surfaces(g, m);
  EXPECT_EQ(f.slice_axis, 2);
  EXPECT_EQ(f.base_side, +1);
  EXPECT_NEAR(f.centre_line[0], 0, 0.02);
  EXPECT_NEAR(std::atan2(f.centre_line[1], f.centre_line[2]), t, 2.0 * std::acos(-1.0) / 180);
}

TEST(Cavities, ASolidBlockHasNoCavityAndSaysWhatToUse) {
  const Grid g = grid({12, 12, 12}, 0.5);
  Mask m(g, 0);
  for (int k = 2; k < 10; ++k)
    for (int j = 2; j < 10; ++j)
      for (int i = 2; i < 10; ++i) m[g.index(i, j, k)] = 1;
  try {
    find_surfaces(g, m);
    FAIL() << "no error";
  } catch (const hw::Error& e) {
    EXPECT_NE(std::string(e.what()).find("encloses a cavity"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("labels (2 = epi, 3/4 = endo)"), std::string::npos) << e.what();
  }
}

// The pig ventricles carry neither labels nor fibres: a case asks for rule-based fibres and
// the surfaces come from the shape; the LV (thicker wall) and the base at high z, as the
// images of the heart show (apex at z = 0, valve rings above z ≈ 55 mm).
TEST(Cavities, PigVentriclesGetSurfacesFibresAndCoordinatesFromTheirShape) {
  const std::string nrrd = std::string(HW_SHARED_DIR) + "/geometry/pig_ventricles_kaboudian128/pig_ventricles_128.nrrd";
  if (!std::filesystem::exists(nrrd)) GTEST_SKIP() << "shared geometry not found: " << nrrd;
  MeshSpec c;
  c.geometry.kind = GeometrySpec::Kind::phase_field_file;
  c.geometry.path = nrrd;
  c.geometry.threshold = 0.5;
  c.fibres.kind = FibreSpec::Kind::rule_based;
  const Geometry geo = build_geometry(c);
  ASSERT_TRUE(geo.long_axis);
  EXPECT_NE(geo.surfaces_note.find("slices across z"), std::string::npos) << geo.surfaces_note;
  EXPECT_NE(geo.long_axis->found_from.find("centre line"), std::string::npos);
  EXPECT_GT(geo.long_axis->dir[2], 0.9) << geo.long_axis->describe();  // apex → base is +z, tilted < 26°
  std::size_t lv = 0, rv = 0, epi = 0, fibres = 0, tissue = 0, e_lo = 0, e_hi = 0;
  for (std::size_t n = 0; n < geo.grid.size(); ++n) {
    if (!geo.mask[n]) continue;
    ++tissue;
    lv += geo.labels[n] == label_lv_endo, rv += geo.labels[n] == label_rv_endo, epi += geo.labels[n] == label_epi;
    const auto& f = geo.fibres->f;
    fibres += std::fabs(std::hypot(f[0][n], f[1][n], f[2][n]) - 1) < 1e-6;
    e_lo += geo.transmural[n] < 0.05f, e_hi += geo.transmural[n] > 0.95f;
  }
  EXPECT_GT(lv, 5000u);
  EXPECT_GT(rv, 5000u);
  EXPECT_GT(epi, 20000u);
  EXPECT_EQ(fibres, tissue);  // a unit fibre in every tissue cell
  EXPECT_GT(e_lo, lv + rv - 1);
  EXPECT_GT(e_hi, epi / 2);
}

}  // namespace
