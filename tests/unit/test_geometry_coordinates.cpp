// Ventricular coordinates and rule-based fibres with a long axis from the case or found:
// on a truncated prolate shell (the base cut off by the grid's top wall, so it has an apex
// and an open base like a heart), the transmural coordinate's monotony endo → epi, the
// apex-base coordinate, the fibre angles at endo and epi against the case's profile, the
// regions and gradients that use the coordinates, the case keys, geometry.vti, and the
// UCSD rabbit (skipped when ../shared is absent).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "formats/vtk_image_reader.hpp"
#include "mesh/fibres_rule_based.hpp"
#include "mesh/geometry.hpp"
#include "mesh/shapes.hpp"
#include "mesh/ventricular_coordinates.hpp"
#include "outputs/geometry_fields.hpp"
#include "run/case_file.hpp"
#include "tissue/case.hpp"
#include "tissue/reaction.hpp"
#include "tissue/regions.hpp"

namespace fs = std::filesystem;
using namespace hw::tissue;

namespace {

const double pi = std::acos(-1.0);

// A prolate shell along z, centre at z = 24 mm in a grid 24 mm high: the upper half is
// cut off by the top wall (the base), the apex is at z = 24 − 20 = 4 mm.
TissueCase half_shell_case() {
  TissueCase c;
  c.grid.n = {32, 32, 48};
  c.grid.h = {0.5, 0.5, 0.5};
  c.geometry.kind = GeometrySpec::Kind::ellipsoid_shell;
  c.geometry.centre = {8, 8, 24};
  c.geometry.radii_outer = {7, 7, 20};
  c.geometry.radii_inner = {4, 4, 17};
  c.geometry.loc = {"case.toml", 3, 1};
  c.fibres.loc = {"case.toml", 9, 1};
  return c;
}

// Helix angle (degrees) of fibre f at a cell whose outward transmural direction is r̂ and
// long axis z: atan2(f·(r̂×c), f·c), c = r̂ × z normalised, as the rule defines it.
double helix_of(const std::array<double, 3>& f, std::array<double, 3> r) {
  const double rl = std::hypot(r[0], r[1], r[2]);
  for (double& x : r) x /= rl;
  std::array<double, 3> c{r[1], -r[0], 0};
  const double cl = std::hypot(c[0], c[1]);
  for (double& x : c) x /= cl;
  const std::array<double, 3> b{r[1] * c[2] - r[2] * c[1], r[2] * c[0] - r[0] * c[2], r[0] * c[1] - r[1] * c[0]};
  double a = std::atan2(f[0] * b[0] + f[1] * b[1] + f[2] * b[2], f[0] * c[0] + f[1] * c[1] + f[2] * c[2]) * 180 / pi;
  // A fibre is a line: the angle in (−90°, 90°].
  if (a > 90) a -= 180;
  if (a <= -90) a += 180;
  return a;
}

// |a − b| of two fibre angles, degrees: fibres are lines, so modulo 180°.
double angle_diff(double a, double b) {
  double d = std::fmod(std::abs(a - b), 180.0);
  return std::min(d, 180 - d);
}

}  // namespace

TEST(GeometryCoordinates, HelixAngleProfile) {
  EXPECT_DOUBLE_EQ(helix_angle({60, -60}, 0), 60);
  EXPECT_DOUBLE_EQ(helix_angle({60, -60}, 1), -60);
  EXPECT_DOUBLE_EQ(helix_angle({60, -60}, 0.25), 30);
  EXPECT_DOUBLE_EQ(helix_angle({60, 20, -60}, 0.5), 20);
  EXPECT_DOUBLE_EQ(helix_angle({60, 20, -60}, 0.75), -20);
  EXPECT_DOUBLE_EQ(helix_angle({45}, 0.3), 45);
  EXPECT_DOUBLE_EQ(helix_angle({60, -60}, 1.5), -60);  // clamped to the wall
}

TEST(GeometryCoordinates, LongAxisFoundOnTruncatedShell) {
  TissueCase c = half_shell_case();
  c.coordinates = true;
  const Geometry geo = build_geometry(c);
  ASSERT_TRUE(geo.long_axis.has_value());
  const LongAxis& ax = *geo.long_axis;
  std::printf("[measured] truncated shell: %s\n", ax.describe().c_str());
  EXPECT_FALSE(ax.given);
  // The principal axis is z and points from the apex (bottom) to the open base (top).
  EXPECT_GT(ax.dir[2], 0.999);
  EXPECT_NEAR(ax.apex, 4.25, 0.3);   // lowest tissue cell centre
  EXPECT_NEAR(ax.base, 23.75, 0.01);  // the top row of cells
  EXPECT_NE(ax.apex_from.find("endocardial"), std::string::npos);
  EXPECT_NE(ax.found_from.find("LV endocardium"), std::string::npos);
  // Given the other way round, the sign is still found from the shape.
  c.fibres.long_axis = std::array<double, 3>{0, 0, -2};
  const Geometry g2 = build_geometry(c);
  EXPECT_TRUE(g2.long_axis->given);
  EXPECT_NEAR(g2.long_axis->dir[2], 1.0, 1e-12);
}

TEST(GeometryCoordinates, LongAxisOfAnObliqueShapeAndTheNarrowEnd) {
  // A cone along (1, 1, 0)/√2 without labels: the principal axis is found, and the apex is
  // the narrow end (the tip at the low corner).
  Grid g;
  g.n = {40, 40, 8};
  g.h = {0.5, 0.5, 0.5};
  Mask m(g, 0);
  const std::array<double, 3> u{1 / std::sqrt(2.0), 1 / std::sqrt(2.0), 0};
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const double x = g.centre(0, i) - 2, y = g.centre(1, j) - 2, z = g.centre(2, k) - 2;
        const double along = x * u[0] + y * u[1];
        const double across = std::hypot(x - along * u[0], y - along * u[1], z);
        if (along > 0 && along < 22 && across < 0.08 * along + 0.3) m[g.index(i, j, k)] = 1;
      }
  const LongAxis ax = find_long_axis(g, m, Field<std::int16_t>(), {3, 4}, std::nullopt);
  EXPECT_GT(ax.dir[0] * u[0] + ax.dir[1] * u[1], 0.99) << ax.describe();
  EXPECT_NE(ax.apex_from.find("narrower"), std::string::npos);
  EXPECT_THROW(find_long_axis(g, m, Field<std::int16_t>(), {3, 4}, std::array<double, 3>{0, 0, 0}), hw::Error);
}

TEST(GeometryCoordinates, TransmuralMonotoneAndApexBase) {
  TissueCase c = half_shell_case();
  c.coordinates = true;
  const Geometry geo = build_geometry(c);
  const Grid& g = geo.grid;
  ASSERT_EQ(geo.transmural.size(), g.size());
  ASSERT_EQ(geo.apex_base.size(), g.size());
  // On the surfaces: 0 at endo, 1 at epi (the base cut is epi too: it touches the wall).
  for (std::size_t n = 0; n < g.size(); ++n) {
    if (!geo.mask[n]) continue;
    ASSERT_GE(geo.transmural[n], 0.0f);
    ASSERT_LE(geo.transmural[n], 1.0f);
    if (geo.labels[n] == label_lv_endo) ASSERT_EQ(geo.transmural[n], 0.0f);
    if (geo.labels[n] == label_epi && geo.labels[n] != label_lv_endo) ASSERT_EQ(geo.transmural[n], 1.0f);
  }
  // Along rays from the axis at mid height, e never decreases outwards, from 0 to 1.
  int rays = 0;
  const int k = g.nz() / 2;
  for (int d = 0; d < 16; ++d) {
    const double phi = 2 * pi * d / 16;
    double last = -1, first = -1;
    for (double r = 2; r < 9; r += 0.05) {
      const int i = int((8 + r * std::cos(phi)) / g.h[0]), j = int((8 + r * std::sin(phi)) / g.h[1]);
      const std::size_t n = g.index(i, j, k);
      if (!geo.mask[n]) continue;
      if (first < 0) first = geo.transmural[n];
      ASSERT_GE(geo.transmural[n], last - 1e-6) << "ray " << d << " at r = " << r;
      last = geo.transmural[n];
    }
    // A ray may pass an endo or epi cell diagonally (they are face neighbours of outside).
    EXPECT_LT(first, 0.2);
    EXPECT_GT(last, 0.8);
    if (d % 4 == 0) {  // along the grid axes
      EXPECT_EQ(first, 0.0);
      EXPECT_EQ(last, 1.0);
    }
    ++rays;
  }
  EXPECT_EQ(rays, 16);
  // Apex-base: z from the apex (0) to the top row (1), increasing with z.
  double lowest = 1, highest = 0;
  for (int kk = 0; kk < g.nz(); ++kk)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const std::size_t n = g.index(i, j, kk);
        if (!geo.mask[n]) continue;
        EXPECT_NEAR(geo.apex_base[n], (g.centre(2, kk) - geo.long_axis->apex) / (geo.long_axis->base - geo.long_axis->apex), 1e-6);
        lowest = std::min<double>(lowest, geo.apex_base[n]);
        highest = std::max<double>(highest, geo.apex_base[n]);
      }
  EXPECT_EQ(lowest, 0.0);
  EXPECT_EQ(highest, 1.0);
}

TEST(GeometryCoordinates, RuleBasedFibreAnglesFollowTheCaseProfile) {
  // The axis is found (not given), the angles come as a three-point profile.
  TissueCase c = half_shell_case();
  c.fibres.kind = FibreSpec::Kind::rule_based;
  c.fibres.angles = {70, 10, -50};
  const Geometry geo = build_geometry(c);
  ASSERT_TRUE(geo.fibres.has_value());
  const Grid& g = geo.grid;
  double endo = 0, epi = 0, mid_err = 0;
  int n_endo = 0, n_epi = 0, n_mid = 0;
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const std::size_t n = g.index(i, j, k);
        if (!geo.mask[n]) continue;
        const double z = g.centre(2, k);
        if (z < 14 || z > 20) continue;  // a band away from apex and base
        const std::array<double, 3> r{g.centre(0, i) - 8, g.centre(1, j) - 8, 0};
        const double a = helix_of({geo.fibres->f[0][n], geo.fibres->f[1][n], geo.fibres->f[2][n]}, r);
        if (geo.labels[n] == label_lv_endo) endo += a, ++n_endo;
        else if (geo.labels[n] == label_epi) epi += a, ++n_epi;
        else mid_err += angle_diff(a, helix_angle(c.fibres.angles, geo.transmural[n])), ++n_mid;
      }
  endo /= n_endo, epi /= n_epi, mid_err /= n_mid;
  std::printf("[measured] truncated shell, angles [70, 10, -50]: endo %.2f epi %.2f deg, mid-wall mean |error| %.2f deg\n",
              endo, epi, mid_err);
  EXPECT_NEAR(endo, 70, 3);
  EXPECT_NEAR(epi, -50, 3);
  EXPECT_LT(mid_err, 5);
}

TEST(GeometryCoordinates, ErrorsNameTheKey) {
  TissueCase c;
  c.grid.n = {8, 8, 8};
  c.coordinates = true;
  c.geometry.loc = {"case.toml", 4, 1};
  try {
    build_geometry(c);
    FAIL() << "a box has no surfaces";
  } catch (const hw::InputError& e) {
    EXPECT_EQ(e.diagnostics().front().loc.line, 4);
    EXPECT_NE(std::string(e.what()).find("endocardial and epicardial surfaces"), std::string::npos) << e.what();
  }
}

TEST(GeometryCoordinates, TransmuralRegionsAndGradient) {
  // Endo/M/epi layers by the transmural coordinate and a gradient of k along it.
  TissueCase c = half_shell_case();
  for (auto [from, to, scale] : {std::tuple{0.0, 0.3, 1.0}, {0.3, 0.7, 2.0}, {0.7, 1.0, 3.0}}) {
    ModelRegion m;
    m.model = "aliev_panfilov_1996";
    m.where.kind = Region::Kind::transmural;
    m.where.from = from;
    m.where.to = to;
    m.scales["mu1"] = scale;  // tells the layers apart
    c.models.push_back(m);
  }
  ParameterGradient gr;
  gr.param = "k";
  gr.along = ParameterGradient::Along::transmural;
  gr.from = 1;
  gr.to = 2;
  c.gradients.push_back(gr);
  Stimulus st;
  st.where.kind = Region::Kind::apex_base;
  st.where.from = 0;
  st.where.to = 0.1;
  st.amplitude = 1;
  c.stimuli.push_back(st);
  SimSetup s = make_sim_setup(c, false);
  ASSERT_EQ(s.geo.transmural.size(), s.geo.grid.size());
  ASSERT_EQ(s.parts.size(), 3u);
  std::size_t total = 0;
  for (std::size_t q = 0; q < 3; ++q) {
    const Part& p = s.parts[q];
    const double lo = q == 0 ? 0.0 : q == 1 ? 0.3 : 0.7, hi = q == 0 ? 0.3 : q == 1 ? 0.7 : 1.0;
    const int kk = p.setup.param_index("k");
    ASSERT_TRUE(p.per_cell);
    for (std::size_t i = 0; i < p.n; ++i) {
      const double e = s.geo.transmural[p.grid_index(i)];
      ASSERT_GE(e, lo - 1e-7);
      ASSERT_LE(e, hi + 1e-7);
      ASSERT_NEAR(p.pcell[std::size_t(kk) * p.n + i], 8 * (1 + e), 1e-9);
    }
    total += p.n;
  }
  EXPECT_EQ(total, s.tissue_cells);
  EXPECT_GT(s.parts[0].n, 0u);
  EXPECT_GT(s.parts[2].n, 0u);
  // The apical stimulus: cells within the lowest tenth only.
  ASSERT_EQ(s.stimuli.size(), 1u);
  std::printf("[measured] truncated shell layers: endo %zu, M %zu, epi %zu cells\n", s.parts[0].n, s.parts[1].n,
              s.parts[2].n);
  const auto& cells = s.stimuli.list().front().cells;
  std::size_t stim = 0;
  for (const auto& per_part : cells) stim += per_part.size();
  EXPECT_GT(stim, 0u);
}

TEST(GeometryCoordinates, CaseKeys) {
  const std::string text = R"(
[geometry]
kind = "ellipsoid-shell"
centre = [8, 8, 24]
radii_outer = [7, 7, 20]
radii_inner = [4, 4, 17]
[grid]
size = [32, 32, 48]
spacing = 0.5
[time]
dt = 0.05
t_end = 1
[fibres]
kind = "rule-based"
axis = "z"
angles = [60, 0, -60]
[[model]]
name = "aliev_panfilov_1996"
region = { kind = "transmural", from = 0, to = 0.3 }
[[model]]
name = "aliev_panfilov_1996"
region = { kind = "transmural", from = 0.3, to = 1 }
[[gradient]]
param = "k"
axis = "transmural"
from = 1
to = 2
[[stimulus]]
region = { kind = "apex-base", from = 0, to = 0.1 }
amplitude = 1
[output]
fields = ["V", "fibres", "transmural", "apex-base"]
)";
  const TissueCase c = hw::io::parse_case(text, "case.toml");
  ASSERT_TRUE(c.fibres.long_axis.has_value());
  EXPECT_EQ(*c.fibres.long_axis, (std::array<double, 3>{0, 0, 1}));
  EXPECT_EQ(c.fibres.angles, (std::vector<double>{60, 0, -60}));
  EXPECT_EQ(c.models[0].where.kind, Region::Kind::transmural);
  EXPECT_EQ(c.models[0].where.to, 0.3);
  EXPECT_EQ(c.models[1].where.from, 0.3);
  EXPECT_EQ(c.gradients[0].along, ParameterGradient::Along::transmural);
  EXPECT_EQ(c.stimuli[0].where.kind, Region::Kind::apex_base);
  EXPECT_EQ(c.output.variables, (std::vector<std::string>{"V"}));
  EXPECT_EQ(c.output.geometry_fields, (std::vector<std::string>{"fibres", "transmural", "apex-base"}));
  EXPECT_TRUE(uses_ventricular_coordinates(c));
  // A vector axis; an axis for rotating fibres still works.
  auto with = [&](const std::string& fibres, const std::string& extra = "") {
    return hw::io::parse_case("[grid]\nsize = [4, 4]\nspacing = 1\n[fibres]\n" + fibres +
                                  "\n[time]\ndt = 0.05\nt_end = 1\n[[model]]\nname = \"aliev_panfilov_1996\"\n" + extra,
                              "case.toml");
  };
  EXPECT_EQ(*with("kind = \"rule-based\"\naxis = [1, 1, 0]").fibres.long_axis, (std::array<double, 3>{1, 1, 0}));
  EXPECT_FALSE(with("kind = \"rule-based\"").fibres.long_axis.has_value());
  EXPECT_EQ(with("kind = \"rotating\"\naxis = \"x\"").fibres.axis, 0);
  // Errors, each at its key.
  auto fails = [&](const std::string& fibres, const std::string& extra, const std::string& want) {
    try {
      with(fibres, extra);
      ADD_FAILURE() << "accepted: " << fibres << " / " << extra;
    } catch (const hw::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  fails("kind = \"rule-based\"\naxis = [0, 0, 0]", "", "zero vector");
  fails("kind = \"rule-based\"\nangles = [60, -60]\nfrom = 50", "", "angles or from/to");
  fails("kind = \"uniform\"\nangles = [60, -60]", "", "applies only to kind \"rule-based\"");
  fails("kind = \"uniform\"\naxis = \"x\"", "", "applies only to kinds \"rotating\" and \"rule-based\"");
  fails("kind = \"none\"", "region = { kind = \"transmural\", from = 0.5, to = 0.2 }", "0 ≤ from < to ≤ 1");
  fails("kind = \"none\"", "region = { kind = \"apex-base\", lo = [0, 0] }", "does not apply");
  fails("kind = \"none\"", "[[gradient]]\nparam = \"k\"\naxis = \"radial\"", "\"transmural\" or \"apex-base\"");
}

TEST(GeometryCoordinates, TransmuralRegionNeedsLabels) {
  TissueCase c;
  c.grid.n = {8, 8, 1};
  ModelRegion m;
  m.model = "aliev_panfilov_1996";
  m.where.kind = Region::Kind::transmural;
  m.where.to = 0.5;
  c.models.push_back(m);
  EXPECT_THROW(make_sim_setup(c, false), hw::InputError);
}

TEST(GeometryCoordinates, GeometryVtiHoldsFibresAndCoordinates) {
  TissueCase c = half_shell_case();
  c.fibres.kind = FibreSpec::Kind::rule_based;
  const fs::path dir = fs::temp_directory_path() / ("hw_geometry_vti_" + std::to_string(::getpid()));
  c.output.directory = dir.string();
  c.output.geometry_fields = {"fibres", "transmural"};
  const std::string path = hw::io::write_geometry_fields(c);
  EXPECT_EQ(fs::path(path).filename(), "geometry.vti");
  // The first array is the fibres: unit vectors on the tissue, 0 elsewhere.
  const hw::io::ImageVolume img = hw::io::read_vti(path);
  ASSERT_EQ(img.components, 3);
  const Geometry geo = build_geometry(c);
  ASSERT_EQ(img.sizes, geo.grid.n);
  std::size_t unit = 0, tissue = 0;
  for (std::size_t n = 0; n < img.voxels(); ++n) {
    const double l = std::hypot(img.value(n, 0), img.value(n, 1), img.value(n, 2));
    if (geo.mask[n]) ++tissue, unit += std::abs(l - 1) < 1e-6;
    else EXPECT_EQ(l, 0.0);
  }
  EXPECT_EQ(unit, tissue);
  c.fibres.kind = FibreSpec::Kind::none;
  c.output.geometry_fields = {"fibres"};
  EXPECT_THROW(hw::io::write_geometry_fields(c), hw::InputError);
  fs::remove_all(dir);
}

TEST(GeometryShared, UcsdRabbitLongAxisAndCoordinates) {
  const std::string path =
      std::string(HW_SHARED_DIR) + "/geometry/rabbit_ventricles_ucsd_chaste/ucsd_rabbit_ventricles_0.25mm.nrrd";
  if (!fs::exists(path)) GTEST_SKIP() << "shared geometry not found: " << path;
  TissueCase c;
  c.geometry.kind = GeometrySpec::Kind::mask_file;
  c.geometry.path = path;
  c.fibres.kind = FibreSpec::Kind::rule_based;  // axis not given: found
  const Geometry geo = build_geometry(c);
  ASSERT_TRUE(geo.long_axis.has_value());
  std::printf("[measured] UCSD rabbit: %s\n", geo.long_axis->describe().c_str());
  // The long axis of this heart is roughly x (the docs said so; the shape agrees).
  EXPECT_GT(std::abs(geo.long_axis->dir[0]), 0.99);
  std::array<std::size_t, 3> layers{};
  for (std::size_t n = 0; n < geo.grid.size(); ++n) {
    if (!geo.mask[n]) continue;
    ASSERT_GE(geo.transmural[n], 0.0f);
    ASSERT_LE(geo.transmural[n], 1.0f);
    ++layers[geo.transmural[n] < 0.3f ? 0 : geo.transmural[n] <= 0.7f ? 1 : 2];
  }
  std::printf("[measured] UCSD rabbit layers by transmural coordinate: endo (< 0.3) %zu, M %zu, epi (> 0.7) %zu cells\n",
              layers[0], layers[1], layers[2]);
  for (std::size_t l : layers) EXPECT_GT(l, 10000u);
}
