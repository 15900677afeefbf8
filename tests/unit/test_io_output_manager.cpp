// The output manager on a real (small) tissue run: every requested output appears, with
// the expected number of steps, and the maps make physical sense for a planar wave.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "io/checkpoint.hpp"
#include "io/output_manager.hpp"
#include "io/png_writer.hpp"
#include "test_io_support.hpp"
#include "tissue/simulation.hpp"

using namespace hw;
using namespace hw::io;
using namespace hw::io::testing;
using namespace hw::tissue;

namespace {

// A 8 × 1.6 mm sheet of ten Tusscher epi cells, paced on its x− face: a planar wave in +x.
TissueCase planar_case(const std::string& dir) {
  TissueCase c;
  c.grid.n = {40, 8, 1};
  c.grid.h = {0.2, 0.2, 0.2};
  ModelRegion m;
  m.model = "tentusscher_2006_epi";
  c.models.push_back(m);
  c.conductivity.sigma_l = 0.1334;
  c.time.dt = 0.02;
  Stimulus s;
  s.where.kind = Region::Kind::box;
  s.where.lo = {0, 0, 0};
  s.where.hi = {0.6, 1.6, 0.2};
  s.amplitude = 200;
  s.duration = 2;
  c.stimuli.push_back(s);
  OutputSpec& o = c.output;
  o.directory = dir;
  o.field_interval = 5;
  o.probes = {{"left", {1, 0.8, 0.1}}, {"right", {7, 0.8, 0.1}}};
  o.probe_interval = 0.5;
  o.electrodes = {{"ahead", {14, 0.8, 0.1}}};
  o.png_interval = 5;
  o.activation_map = true;
  o.apd_map = true;
  o.conduction_velocity = true;
  o.checkpoint_interval = 10;
  return c;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST(IoOutputManager, PlanarWaveRunWritesEveryOutput) {
  ScratchDir dir("om");
  const TissueCase c = planar_case(dir / "out");
  SimulationOptions so;
  so.threads = 1;
  Simulation sim(c, so);
  OutputManager out(sim, c.output);
  out.begin();
  int checkpoints = 0;
  sim.run_until(20, [&](const Simulation&) {
    out.after_step();
    if (out.checkpoint_due()) {
      out.write_checkpoint(dir / "state.hwck", 77);
      ++checkpoints;
    }
  });
  const auto lines = out.finish();
  EXPECT_EQ(checkpoints, 2);  // t = 10 and 20
  const Checkpoint ck = read_checkpoint(dir / "state.hwck", 77);
  EXPECT_NEAR(ck.meta.time, 20, 1e-9);
  EXPECT_EQ(ck.meta.step, 1000);

  XmlDoc pvd(dir / "out/fields.pvd");
  ASSERT_NE(pvd.doc, nullptr);
  std::vector<xmlNodePtr> ds;
  find_all(pvd.root(), "DataSet", ds);
  EXPECT_EQ(ds.size(), 5u);  // 0, 5, 10, 15, 20 ms

  const auto probes = lines_of(dir / "out/probes.csv");
  EXPECT_EQ(probes.front(), "t,left,right");
  EXPECT_EQ(probes.size(), 1u + 41u);
  const auto ecg = lines_of(dir / "out/ecg.csv");
  EXPECT_EQ(ecg.front(), "t,ahead");
  EXPECT_EQ(ecg.size(), 1u + 41u);
  EXPECT_TRUE(std::filesystem::exists(dir / "out/png/V_00004.png"));
  EXPECT_TRUE(std::filesystem::exists(dir / "out/activation.png"));
  const Image frame = read_png(dir / "out/png/V_00002.png");
  if (const char* keep = std::getenv("HW_KEEP_PNG_DIR")) {  // to look at the pictures
    for (const char* f : {"png/V_00002.png", "activation.png"})
      std::filesystem::copy_file(dir / ("out/" + std::string(f)),
                                 std::string(keep) + "/" + std::filesystem::path(f).filename().string(),
                                 std::filesystem::copy_options::overwrite_existing);
  }
  EXPECT_GT(frame.width, 384);

  // Maps: the summary holds a plausible conduction velocity for TT06 at σ = 0.1334 S/m,
  // χ = 140/mm (textbook ~0.6-0.7 m/s; coarse 0.2 mm cells slow it).
  const double cv = out.conduction_velocity();
  if (std::isnan(cv)) for (const auto& l : lines_of(dir / "out/probes.csv")) std::printf("%s\n", l.c_str());
  std::printf("[measured] output manager planar wave CV %.4f m/s\n", cv);
  EXPECT_GT(cv, 0.3);
  EXPECT_LT(cv, 1.0);
  const auto maps = lines_of(dir / "out/maps.csv");
  EXPECT_EQ(maps.front(), "name,value,unit");
  bool has_all = false;
  for (const auto& l : maps) has_all |= l == "activated_cells,320,cells";
  EXPECT_TRUE(has_all);
  XmlDoc mv(dir / "out/maps.vti");
  std::vector<xmlNodePtr> arrays;
  find_all(mv.root(), "DataArray", arrays);
  ASSERT_EQ(arrays.size(), 3u);
  EXPECT_EQ(attr(arrays[0], "Name"), "activation_time");
  std::uint64_t nb = 0;
  const auto act = decode_vtk_array(text(arrays[0]), &nb);
  ASSERT_EQ(act.size(), 320u * 4);
  float a_left, a_right;
  std::memcpy(&a_left, act.data() + 4 * (2 + 40 * 4), 4);
  std::memcpy(&a_right, act.data() + 4 * (37 + 40 * 4), 4);
  EXPECT_LT(a_left, a_right);
  EXPECT_GT(a_right - a_left, 5.0);
  EXPECT_FALSE(lines.empty());
}

TEST(IoOutputManager, Hdf5FormatAndUnknownVariable) {
  ScratchDir dir("om_h5");
  TissueCase c = planar_case(dir / "out");
  c.output.format = OutputSpec::Format::hdf5;
  c.output.variables = {"V", "Ca_i"};
  c.output.electrodes.clear();
  c.output.png_interval = 0;
  c.time.t_end = 2;
  SimulationOptions so;
  so.threads = 1;
  Simulation sim(c, so);
  {
    OutputManager out(sim, c.output);
    out.begin();
    sim.run_until(5, [&](const Simulation&) { out.after_step(); });
    out.finish();
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "out/fields.h5"));
  XmlDoc x(dir / "out/fields.xdmf");
  std::vector<xmlNodePtr> grids;
  find_all(x.root(), "Grid", grids);
  EXPECT_EQ(grids.size(), 3u);  // collection + t = 0, 5
  EXPECT_EQ(lines_of(dir / "out/probes.csv").front(), "t,left.V,right.V,left.Ca_i,right.Ca_i");
  c.output.variables = {"V", "no_such_state"};
  EXPECT_THROW(OutputManager(sim, c.output), InputError);
}
