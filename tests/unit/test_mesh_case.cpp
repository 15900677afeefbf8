// Meshes as cases: the UCSD rabbit run from its TetGen surface against the same heart run
// from its voxel NRRD (activation times compared on the mesh's nodes), and the openCARP
// example case with its fibres, tags as regions and maps written back onto the mesh.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "formats/nrrd.hpp"
#include "formats/unstructured_mesh.hpp"
#include "mesh/geometry.hpp"
#include "mesh/voxelise.hpp"
#include "outputs/maps.hpp"
#include "outputs/output_manager.hpp"
#include "run/case_check.hpp"
#include "run/case_file.hpp"
#include "tissue/simulation.hpp"

namespace fs = std::filesystem;
using namespace hw;
using namespace hw::tissue;

namespace {

const std::string rabbit_dir = std::string(HW_SHARED_DIR) + "/geometry/rabbit_ventricles_ucsd_chaste/";

// Activation times (ms) of a case, per cell, fed from V after every step.
Field<float> activation_of(const TissueCase& c, double t_end) {
  Simulation sim(c);
  io::ActivationTracker tr(sim.grid(), sim.mask().empty() ? nullptr : &sim.mask(), -20, false);
  Field<float> v;
  sim.voltage(v);
  tr.update(sim.time(), v);
  sim.run_until(t_end, [&](const Simulation& s) {
    s.voltage(v);
    tr.update(s.time(), v);
  });
  return tr.activation();
}

std::string rabbit_case(const std::string& geometry, const std::array<double, 3>& stim) {
  return geometry + fmt::format(R"(
[grid]
boundary = "no-flux"
[conductivity]
sigma_l = 0.1334
sigma_t = 0.1334
chi_per_cm = 1400
cm_uF_per_cm2 = 1.0
[[model]]
name = "bueno_orovio_2008_epi"
[[stimulus]]
region = {{ kind = "sphere", centre = [{}, {}, {}], radius = 1.5 }}
start = 0
duration = 2
amplitude_uA_per_cm3 = 100000
[time]
dt = 0.02
t_end = 20
)",
                                stim[0], stim[1], stim[2]);
}

// The labels of a geometry's tissue cells.
std::set<int> tissue_labels(const Geometry& geo) {
  std::set<int> labels;
  for (std::size_t n = 0; n < geo.mask.size(); ++n)
    if (geo.mask[n]) labels.insert(geo.labels[n]);
  return labels;
}

// Runs the case to its end with its outputs, as `heartwave run` does.
void run_with_outputs(const TissueCase& c, Simulation& sim) {
  io::OutputManager om(c, sim);
  om.begin();
  sim.run_until(c.time.t_end, [&](const Simulation&) { om.after_step(); });
  om.finish(false);
}

// openCARP's activation.dat: its lines, and those of nodes that activated (not -1).
std::pair<std::size_t, std::size_t> activation_dat_lines(const fs::path& file) {
  std::ifstream dat(file);
  std::size_t lines = 0, activated = 0;
  for (std::string l; std::getline(dat, l); ++lines) activated += l != "-1";
  return {lines, activated};
}

}  // namespace

TEST(GeometryShared, UcsdRabbitMeshActivatesAsItsNrrd) {
  if (!fs::exists(rabbit_dir + "UCSD_heart.face")) GTEST_SKIP() << "shared geometry not found: " << rabbit_dir;
  // Both hearts at 0.5 mm: the NRRD resampled (nearest), the surface voxelised directly.
  const std::string mask = "[geometry]\nkind = \"mask\"\nfile = \"" + rabbit_dir +
                           "ucsd_rabbit_ventricles_0.25mm.nrrd\"\nspacing = 0.5\n";
  const std::string mesh = "[geometry]\nkind = \"mesh\"\nfile = \"" + rabbit_dir +
                           "UCSD_heart.face\"\nunits = \"cm\"\nspacing = 0.5\n";
  // The stimulus at one physical point, an interior node of the tet mesh (in no triangle),
  // placed in each case's own coordinates (mm from its grid corner).
  io::UnstructuredMesh nodes = io::read_tetgen(rabbit_dir + "UCSD_heart.face");
  io::scale_to_mm(nodes, 10);
  std::set<std::int32_t> on_surface;
  for (const auto& t : nodes.triangles) on_surface.insert(t.begin(), t.end());
  std::size_t p = 0;
  while (on_surface.count(std::int32_t(p))) ++p;
  const auto P = nodes.points[p];
  auto origin_of = [&](const std::string& geometry) {
    const TissueCase c = io::parse_case(rabbit_case(geometry, {1, 1, 1}), "probe.toml");
    return build_geometry(c).grid;
  };
  const Grid ga = origin_of(mask), gb = origin_of(mesh);
  auto in_case = [&](const Grid& g) { return std::array<double, 3>{P[0] - g.origin[0], P[1] - g.origin[1], P[2] - g.origin[2]}; };
  const TissueCase ca = io::parse_case(rabbit_case(mask, in_case(ga)), "mask.toml");
  const TissueCase cb = io::parse_case(rabbit_case(mesh, in_case(gb)), "mesh.toml");
  const Field<float> ta = activation_of(ca, 20), tb = activation_of(cb, 20);
  const Geometry geo_a = build_geometry(ca), geo_b = build_geometry(cb);
  // Both maps onto every node of the tet mesh (interior nodes included), compared there.
  const NodeSampler sa(ga, geo_a.mask, nodes.points), sb(gb, geo_b.mask, nodes.points);
  const std::vector<double> na = sa.sample(ta.data()), nb = sb.sample(tb.data());
  std::vector<double> diff;
  std::size_t only_one = 0;
  for (std::size_t n = 0; n < na.size(); ++n) {
    if (std::isfinite(na[n]) && std::isfinite(nb[n])) diff.push_back(std::fabs(na[n] - nb[n]));
    else only_one += std::isfinite(na[n]) != std::isfinite(nb[n]);
  }
  ASSERT_GT(diff.size(), 1000u);
  std::sort(diff.begin(), diff.end());
  const double median = diff[diff.size() / 2], p95 = diff[diff.size() * 95 / 100];
  std::printf("[measured] UCSD rabbit at 0.5 mm, 20 ms from one stimulus: activation on %zu nodes of the mesh, "
              "|T_mesh − T_nrrd| median %.3f ms, 95%% %.3f ms, max %.3f ms; %zu nodes activated in one only\n",
              diff.size(), median, p95, diff.back(), only_one);
  // One cell's travel time h/CV ≈ 0.5 mm / 0.6 mm/ms ≈ 0.8 ms bounds the staircase
  // difference between two voxelisations of the same surface.
  EXPECT_LE(median, 0.4);
  EXPECT_LE(p95, 1.5);

  // The same surface voxelised onto the NRRD's own 0.25 mm grid, then resampled to 0.5 mm as
  // the NRRD is (nearest): the two runs then differ only where the voxeliser and the NRRD
  // differ, not by the fraction of a voxel between two grids, and every node must agree
  // within one cell's travel time.
  const io::ImageVolume fine = io::read_nrrd(rabbit_dir + "ucsd_rabbit_ventricles_0.25mm.nrrd");
  Grid g0;
  for (int a = 0; a < 3; ++a) {
    g0.n[a] = fine.sizes[a];
    g0.h[a] = fine.spacing[a];
    g0.origin[a] = fine.origin[a] - 0.5 * fine.spacing[a];
  }
  io::UnstructuredMesh surface = io::read_tetgen(rabbit_dir + "UCSD_heart.face");
  io::scale_to_mm(surface, 10);
  const MeshVoxels same = voxelise(surface, g0, {});
  std::size_t agree = 0, either = 0;
  for (std::size_t n = 0; n < g0.size(); ++n) {
    const bool x = fine.value(n) > 0, y = same.mask[n] != 0;
    either += x || y;
    agree += x && y;
  }
  io::ImageVolume img = fine;
  std::vector<double> v(same.mask.size());
  for (std::size_t n = 0; n < v.size(); ++n) v[n] = same.mask[n];
  img.set_values(io::ScalarType::u8, v);
  const fs::path nrrd = fs::temp_directory_path() / fmt::format("hw_rabbit_face_on_nrrd_grid_{}.nrrd", getpid());
  io::write_nrrd(nrrd.string(), img);
  const std::string on_grid = "[geometry]\nkind = \"mask\"\nfile = \"" + nrrd.string() + "\"\nspacing = 0.5\n";
  const TissueCase cc = io::parse_case(rabbit_case(on_grid, in_case(ga)), "face_on_nrrd_grid.toml");
  const Geometry geo_c = build_geometry(cc);
  for (int a = 0; a < 3; ++a) ASSERT_NEAR(geo_c.grid.origin[a], ga.origin[a], 1e-9);
  const Field<float> tc = activation_of(cc, 20);
  const std::vector<double> nc = NodeSampler(ga, geo_c.mask, nodes.points).sample(tc.data());
  std::vector<double> d2;
  std::size_t only_one_2 = 0;
  for (std::size_t n = 0; n < na.size(); ++n) {
    if (std::isfinite(na[n]) && std::isfinite(nc[n])) d2.push_back(std::fabs(na[n] - nc[n]));
    else only_one_2 += std::isfinite(na[n]) != std::isfinite(nc[n]);
  }
  fs::remove(nrrd);
  ASSERT_GT(d2.size(), 1000u);
  std::sort(d2.begin(), d2.end());
  std::printf("[measured] UCSD rabbit .face voxelised on the NRRD's 0.25 mm grid, both run at 0.5 mm: %.3f %% voxel "
              "agreement at 0.25 mm over the tissue; "
              "activation on %zu nodes, |T_face − T_nrrd| median %.3f ms, 95%% %.3f ms, max %.3f ms; %zu nodes "
              "activated in one only\n",
              100.0 * double(agree) / double(either), d2.size(), d2[d2.size() / 2], d2[d2.size() * 95 / 100], d2.back(),
              only_one_2);
  EXPECT_GE(double(agree) / double(either), 0.99);
  EXPECT_LE(d2.back(), 0.5 / 0.6);  // within one cell's travel time at every node
}

TEST(MeshCase, OpenCarpExampleRunsWithFibresRegionsAndMapsOnTheMesh) {
  const std::string example = std::string(HW_TEST_DATA_DIR) + "/../examples/ellipsoid_lv_mesh.toml";
  const fs::path out = fs::temp_directory_path() / fmt::format("hw_mesh_case_{}", getpid());
  fs::remove_all(out);
  TissueCase c = io::read_case_file(example, {"time.t_end=6", "output.directory=\"" + out.string() + "\""});
  ASSERT_EQ(c.geometry.kind, GeometrySpec::Kind::mesh);
  const Geometry geo = build_geometry(c);
  ASSERT_TRUE(geo.fibres);
  ASSERT_TRUE(geo.mesh);
  EXPECT_EQ(tissue_labels(geo), (std::set<int>{1, 2, 3}));
  Simulation sim(c);
  run_with_outputs(c, sim);
  for (const char* f : {"maps_mesh.vtu", "activation.dat", "V_mesh.igb"}) EXPECT_TRUE(fs::exists(out / f)) << f;
  // The maps read back onto the 576 nodes; V_mesh.igb has one frame per field interval.
  const io::UnstructuredMesh back = io::read_vtu((out / "maps_mesh.vtu").string());
  EXPECT_EQ(back.points.size(), geo.mesh->points.size());
  std::vector<float> v;
  const io::IgbHeader h = io::read_igb((out / "V_mesh.igb").string(), v);
  EXPECT_EQ(h.nodes, geo.mesh->points.size());
  EXPECT_EQ(h.frames, 4u);  // t = 0, 2, 4, 6 ms
  const auto [lines, activated] = activation_dat_lines(out / "activation.dat");
  EXPECT_EQ(lines, geo.mesh->points.size());
  EXPECT_GT(activated, 3u);  // the nodes around the stimulated wall
  fs::remove_all(out);
}

// examples/rabbit_mesh.toml: the UCSD rabbit from its TetGen surface alone (no tags, no
// markers) gets the surfaces found from its cavities, rule-based fibres, the three
// Bueno-Orovio layers by transmural coordinate, and its maps back on the mesh's nodes.
TEST(MeshCase, UcsdRabbitTetGenExampleRunsWithFibresLayersAndMapsOnTheMesh) {
  const std::string example = std::string(HW_TEST_DATA_DIR) + "/../examples/rabbit_mesh.toml";
  if (!fs::exists(rabbit_dir + "UCSD_heart.face")) GTEST_SKIP() << "shared geometry not found: " << rabbit_dir;
  const fs::path out = fs::temp_directory_path() / fmt::format("hw_rabbit_mesh_case_{}", getpid());
  fs::remove_all(out);
  TissueCase c = io::read_case_file(example, {"time.t_end=4", "output.directory=\"" + out.string() + "\"",
                                              "output.field_interval=2"});
  const Geometry geo = build_geometry(c);
  ASSERT_TRUE(geo.fibres);
  ASSERT_TRUE(geo.mesh);
  // The surfaces found from the shape: myocardium, epicardium, LV and RV endocardium.
  EXPECT_EQ(tissue_labels(geo), (std::set<int>{1, 2, 3, 4}));
  Simulation sim(c);
  run_with_outputs(c, sim);
  // Three model regions, each a layer of the wall holding a fair share of the tissue, as
  // `run --check` reports them ("  region    NAME: N cells").
  run::CheckOptions co;
  co.backend = "cpu";
  co.calibrate_seconds = 0;
  std::vector<std::size_t> per_model;
  for (const std::string& line : run::check_case(c, co).lines)
    if (line.rfind("  region    ", 0) == 0)
      per_model.push_back(std::stoul(line.substr(line.find(": ") + 2)));
  ASSERT_EQ(per_model.size(), 3u);
  for (std::size_t r = 0; r < per_model.size(); ++r)
    EXPECT_GT(per_model[r], sim.tissue_cells() / 10) << c.models[r].model;
  const io::UnstructuredMesh back = io::read_vtu((out / "maps_mesh.vtu").string());
  EXPECT_EQ(back.points.size(), geo.mesh->points.size());
  const auto [lines, activated] = activation_dat_lines(out / "activation.dat");
  EXPECT_EQ(lines, geo.mesh->points.size());
  EXPECT_GT(activated, 50u);  // the apical nodes by 4 ms
  std::printf("[measured] rabbit_mesh.toml at 4 ms: %zu of %zu mesh nodes activated; layers endo/M/epi %zu/%zu/%zu cells\n",
              activated, lines, per_model[0], per_model[1], per_model[2]);
  fs::remove_all(out);
}

// A run resumed from a checkpoint continues V_mesh.igb: the frames up to the checkpoint stay,
// those a killed run wrote after it go, and the file ends equal to an uninterrupted run's.
TEST(MeshCase, ResumedRunContinuesTheIgbAsAnUninterruptedRun) {
  const std::string example = std::string(HW_TEST_DATA_DIR) + "/../examples/ellipsoid_lv_mesh.toml";
  const fs::path root = fs::temp_directory_path() / fmt::format("hw_mesh_igb_{}", getpid());
  fs::remove_all(root);
  const auto case_in = [&](const fs::path& out) {
    return io::read_case_file(example, {"time.t_end=6", "output.directory=\"" + out.string() + "\""});
  };
  const TissueCase whole_case = case_in(root / "whole");
  {
    Simulation sim(whole_case);
    run_with_outputs(whole_case, sim);
  }
  const TissueCase c = case_in(root / "restarted");
  std::vector<unsigned char> state, outputs;
  {
    Simulation sim(c);
    io::OutputManager om(c, sim);
    om.begin();
    sim.run_until(2, [&](const Simulation&) { om.after_step(); });
    state = sim.save_state();
    outputs = om.save_state();
    sim.run_until(4, [&](const Simulation&) { om.after_step(); });  // then killed: no finish()
  }
  Simulation sim(c);
  sim.load_state(state);
  std::vector<std::string> lines;
  {
    io::OutputManager om(c, sim, &outputs);
    om.begin();
    sim.run_until(c.time.t_end, [&](const Simulation&) { om.after_step(); });
    lines = om.finish(false);
  }
  std::vector<float> a, b;
  const io::IgbHeader ha = io::read_igb((root / "whole/V_mesh.igb").string(), a);
  const io::IgbHeader hb = io::read_igb((root / "restarted/V_mesh.igb").string(), b);
  EXPECT_EQ(hb.frames, ha.frames);  // t = 0, 2, 4, 6 ms
  EXPECT_EQ(hb.t0, ha.t0);
  EXPECT_EQ(b, a);
  bool noted = false;
  for (const auto& l : lines) noted = noted || l.find("V_mesh.igb continues after its 2 frames up to 2 ms") != std::string::npos;
  EXPECT_TRUE(noted);
  fs::remove_all(root);
}
