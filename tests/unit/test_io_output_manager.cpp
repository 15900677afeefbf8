// The output manager on a real (small) tissue run: every requested output appears, with
// the expected number of steps, the maps make physical sense for a planar wave, and a run
// interrupted at a checkpoint and resumed writes the same files as an uninterrupted one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "outputs/checkpoint.hpp"
#include "outputs/hdf5_writer.hpp"
#include "outputs/output_manager.hpp"
#include "outputs/png_writer.hpp"
#include "outputs/trace_plot.hpp"
#include "outputs/font.hpp"
#include "formats/nrrd.hpp"
#include "test_io_support.hpp"
#include "test_tissue_util.hpp"
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
  c.stimuli.push_back(hw::tissue::testing::box_stimulus({0, 0, 0}, {0.6, 1.6, 0.2}, 200, 2));
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
  return c;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
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
  OutputManager out(c, sim);
  out.begin();
  sim.run_until(20, [&](const Simulation&) { out.after_step(); });
  const auto lines = out.finish();
  EXPECT_TRUE(out.notes().empty());

  XmlDoc pvd(dir / "out/fields.pvd");
  ASSERT_NE(pvd.doc, nullptr);
  std::vector<xmlNodePtr> ds;
  find_all(pvd.root(), "DataSet", ds);
  EXPECT_EQ(ds.size(), 5u);  // 0, 5, 10, 15, 20 ms

  const auto probes = lines_of(dir / "out/probes.csv");
  EXPECT_EQ(probes.front(), "t_ms,left_mV,right_mV");
  EXPECT_EQ(probes.size(), 1u + 41u);
  const auto ecg = lines_of(dir / "out/ecg.csv");
  EXPECT_EQ(ecg.front(), "t_ms,ahead_mV");
  EXPECT_EQ(ecg.size(), 1u + 41u);
  // The front runs towards the electrode: a positive deflection (an operator without σ
  // would give zeros).
  double ecg_max = 0;
  for (std::size_t r = 1; r < ecg.size(); ++r) ecg_max = std::max(ecg_max, std::stod(ecg[r].substr(ecg[r].find(',') + 1)));
  EXPECT_GT(ecg_max, 0.0);
  EXPECT_TRUE(std::filesystem::exists(dir / "out/V_00004.png"));
  EXPECT_TRUE(std::filesystem::exists(dir / "out/activation.png"));
  const Image frame = read_png(dir / "out/V_00002.png");
  if (const char* keep = std::getenv("HW_KEEP_PNG_DIR")) {  // to look at the pictures
    for (const char* f : {"V_00002.png", "activation.png", "probes.png", "ecg.png"})
      std::filesystem::copy_file(dir / ("out/" + std::string(f)),
                                 std::string(keep) + "/" + std::filesystem::path(f).filename().string(),
                                 std::filesystem::copy_options::overwrite_existing);
  }
  EXPECT_GT(frame.width, 384);
  // The traces as pictures beside their CSV: a panel per variable, a line per probe.
  const Image probes_png = read_png(dir / "out/probes.png"), ecg_png = read_png(dir / "out/ecg.png");
  EXPECT_EQ(probes_png.width, 900);
  EXPECT_GT(probes_png.height, 260);
  auto count = [](const Image& img, Rgb c) {
    int n = 0;
    for (int y = 0; y < img.height; ++y)
      for (int x = 0; x < img.width; ++x) n += img.at(x, y) == c;
    return n;
  };
  EXPECT_GT(count(probes_png, trace_colour(0)), 100);  // left
  EXPECT_GT(count(probes_png, trace_colour(1)), 100);  // right
  EXPECT_GT(count(ecg_png, trace_colour(0)), 100);     // ahead
  EXPECT_EQ(count(ecg_png, trace_colour(1)), 0);       // one electrode, one line

  // Maps: the summary holds a plausible conduction velocity for TT06 at σ = 0.1334 S/m,
  // χ = 140/mm (textbook ~0.6-0.7 m/s; coarse 0.2 mm cells slow it).
  const double cv = out.conduction_velocity();
  if (std::isnan(cv)) for (const auto& l : lines_of(dir / "out/probes.csv")) std::printf("%s\n", l.c_str());
  std::printf("[measured] output manager planar wave CV %.4f m/s\n", cv);
  EXPECT_GT(cv, 0.3);
  EXPECT_LT(cv, 1.0);
  const auto maps = lines_of(dir / "out/maps_summary.csv");
  EXPECT_EQ(maps.front(), "name,value,unit");
  bool has_all = false;
  for (const auto& l : maps) has_all |= l == "activated_cells,320,cells";
  EXPECT_TRUE(has_all);
  XmlDoc mv(dir / "out/maps.vti");
  std::vector<xmlNodePtr> arrays;
  find_all(mv.root(), "DataArray", arrays);
  ASSERT_EQ(arrays.size(), 3u);
  EXPECT_EQ(attr(arrays[0], "Name"), "activation");
  EXPECT_EQ(attr(arrays[1], "Name"), "apd90");
  EXPECT_EQ(attr(arrays[2], "Name"), "conduction_velocity");
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
    OutputManager out(c, sim);
    out.begin();
    sim.run_until(5, [&](const Simulation&) { out.after_step(); });
    out.finish();
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "out/fields.h5"));
  XmlDoc x(dir / "out/fields.xdmf");
  std::vector<xmlNodePtr> grids;
  find_all(x.root(), "Grid", grids);
  EXPECT_EQ(grids.size(), 3u);  // collection + t = 0, 5
  EXPECT_EQ(lines_of(dir / "out/probes.csv").front(), "t_ms,left.V_mV,right.V_mV,left.Ca_i_mM,right.Ca_i_mM");
  c.output.variables = {"V", "no_such_state"};
  EXPECT_THROW(OutputManager(c, sim), InputError);
}

namespace {

// Runs the planar case from its start to t_end in `dir`, stopping at t_stop (if > 0) to
// save the simulation and the outputs, then going on with a new Simulation and manager
// built from those bytes (what `heartwave run --restart` does). With t_crash > t_stop the
// first process runs on past its checkpoint, writing outputs, before it dies.
void run_planar(const std::string& dir, double t_stop, double t_end, const std::string* resume_dir = nullptr,
                OutputSpec::Format format = OutputSpec::Format::vtk, double t_crash = 0) {
  TissueCase c = planar_case(dir);
  c.output.format = format;
  c.output.probe_interval = 0.25;
  c.output.field_interval = 2.5;
  c.output.png_interval = 2.5;
  c.output.png_variable = "Ca_i";  // colour range from the first frame: must survive the restart
  SimulationOptions so;
  so.threads = 1;
  std::vector<unsigned char> state, outputs;
  if (t_stop > 0) {
    Simulation sim(c, so);
    OutputManager out(c, sim);
    out.begin();
    sim.run_until(t_stop, [&](const Simulation&) { out.after_step(); });
    state = sim.save_state();
    outputs = out.save_state();
    if (t_crash > t_stop) sim.run_until(t_crash, [&](const Simulation&) { out.after_step(); });
  }  // the first process ends here: nothing but the two byte vectors goes on
  if (resume_dir) c.output.directory = *resume_dir;
  Simulation sim(c, so);
  if (t_stop > 0) sim.load_state(state);
  OutputManager out(c, sim, t_stop > 0 ? &outputs : nullptr);
  if (t_stop > 0) {
    ASSERT_EQ(out.notes().size(), 1u);
    EXPECT_NE(out.notes()[0].find("outputs continue"), std::string::npos) << out.notes()[0];
  }
  out.begin();
  sim.run_until(t_end, [&](const Simulation&) { out.after_step(); });
  out.finish(false);
}

}  // namespace

// Found by fuzz_checkpoint: states whose checksums are right but whose contents are not (a
// faulty writer, not a damaged copy) must be refused, not loop for ever in the outputs'
// schedule: a step count so large that t + dt == t, an output time far from the run's.
TEST(IoOutputManager, DamagedStatesBehindGoodChecksumsAreRefused) {
  ScratchDir dir("om_damaged");
  TissueCase c = planar_case(dir / "out");
  c.output.electrodes.clear();
  c.output.png_interval = 0;
  SimulationOptions so;
  so.threads = 1;
  std::vector<unsigned char> state, outputs;
  {
    Simulation sim(c, so);
    OutputManager out(c, sim);
    out.begin();
    sim.run_until(1, [&](const Simulation&) { out.after_step(); });
    state = sim.save_state();
    outputs = out.save_state();
  }
  Simulation sim(c, so);
  // The state: magic (8 bytes), then the step count.
  std::vector<unsigned char> huge_steps = state;
  const std::int64_t steps = std::int64_t(1) << 60;
  std::memcpy(huge_steps.data() + 8, &steps, sizeof steps);
  EXPECT_THROW(sim.load_state(huge_steps), hw::Error);
  sim.load_state(state);
  // The outputs: the tag (u64 length + bytes), the outputs' hash (u64), then the next field,
  // picture, probe and ECG times.
  const std::size_t next_probe = 8 + std::string("heartwave-outputs-2").size() + 8 + 2 * sizeof(double);
  std::vector<unsigned char> far_probe = outputs;
  const double far = -1e300;
  std::memcpy(far_probe.data() + next_probe, &far, sizeof far);
  try {
    OutputManager out(c, sim, &far_probe);
    ADD_FAILURE() << "a probe time of -1e300 ms was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("next probe time"), std::string::npos) << e.what();
  }
  OutputManager ok(c, sim, &outputs);  // the undamaged bytes still resume
  EXPECT_FALSE(ok.notes().empty());
}

TEST(IoOutputManager, ResumedRunWritesTheSameFilesAsAnUninterruptedOne) {
  // Arrange
  ScratchDir dir("om_resume");
  run_planar(dir / "full", 0, 12);

  // Act: stop at 6.1 ms (between field, frame and probe times), resume to 12 ms.
  run_planar(dir / "part", 6.1, 12);

  // Assert: byte-identical traces, maps, series index and frames.
  int compared = 0;
  for (const char* f : {"probes.csv", "ecg.csv", "maps.vti", "maps_summary.csv", "fields.pvd",
                        "fields_000004.vti", "Ca_i_00001.png", "Ca_i_00004.png", "activation.png"}) {
    const std::string a = slurp(dir / ("full/" + std::string(f))), b = slurp(dir / ("part/" + std::string(f)));
    ASSERT_FALSE(a.empty()) << f;
    EXPECT_TRUE(a == b) << f << " differs after the restart";
    ++compared;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "part/Ca_i_00005.png"));
  const auto probes = lines_of(dir / "part/probes.csv");
  EXPECT_EQ(probes.size(), 1u + 49u);  // t = 0, 0.25, …, 12 ms: the whole run
  std::printf("[measured] output manager restart at 6.1 of 12 ms: %d files byte-identical, %zu probe rows\n",
              compared, probes.size() - 1);
}

// HDF5: the resumed run goes on in fields.h5, dropping the steps the first process wrote
// after its checkpoint; every dataset then equals the uninterrupted run's.
TEST(IoOutputManager, ResumedHdf5SeriesContinuesInOneFile) {
  ScratchDir dir("om_resume_h5");
  run_planar(dir / "full", 0, 12, nullptr, OutputSpec::Format::hdf5);
  run_planar(dir / "part", 6.1, 12, nullptr, OutputSpec::Format::hdf5, 9.0);
  int h5_files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir / "part")) h5_files += e.path().extension() == ".h5";
  EXPECT_EQ(h5_files, 1);
  hid_t a = H5Fopen((dir / "full/fields.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t b = H5Fopen((dir / "part/fields.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  const auto times = read_dataset<double>(a, "/time");
  EXPECT_EQ(times.size(), 5u);  // t = 0, 2.5, 5, 7.5, 10
  EXPECT_EQ(read_dataset<double>(b, "/time"), times);
  for (std::size_t k = 0; k < times.size(); ++k) {
    const std::string name = "/fields/V/" + Hdf5SeriesWriter::step_name(int(k));
    EXPECT_EQ(read_dataset<float>(a, name), read_dataset<float>(b, name)) << name;
  }
  H5Fclose(a);
  H5Fclose(b);
  EXPECT_EQ(slurp(dir / "full/fields.xdmf"), slurp(dir / "part/fields.xdmf"));
  EXPECT_EQ(slurp(dir / "full/probes.csv"), slurp(dir / "part/probes.csv"));
}

TEST(IoOutputManager, ResumingWithOtherOutputsStartsThemAfreshAndDamagedStateIsAnInputError) {
  // Arrange: a state saved at 1 ms.
  ScratchDir dir("om_resume_other");
  TissueCase c = planar_case(dir / "out");
  c.output.electrodes.clear();
  c.output.png_interval = 0;
  SimulationOptions so;
  so.threads = 1;
  Simulation sim(c, so);
  std::vector<unsigned char> outputs;
  {
    OutputManager out(c, sim);
    out.begin();
    sim.run_until(1, [&](const Simulation&) { out.after_step(); });
    outputs = out.save_state();
  }

  // Act / Assert: another probe interval cannot continue the old traces.
  TissueCase other = c;
  other.output.probe_interval = 0.1;
  {
    OutputManager out(other, sim, &outputs);
    ASSERT_EQ(out.notes().size(), 1u);
    EXPECT_NE(out.notes()[0].find("afresh"), std::string::npos) << out.notes()[0];
    out.begin();
    EXPECT_TRUE(std::filesystem::exists(dir / "out/probes_from_50.csv"));
  }
  // Damaged bytes (cut short) are refused with a message, not a crash.
  auto cut = outputs;
  cut.resize(cut.size() / 2);
  try {
    OutputManager out(c, sim, &cut);
    FAIL() << "a truncated outputs' state was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("outputs' state"), std::string::npos) << e.what();
  }
}

// A heart's image is placed in space (the rabbit's NRRD origin is (−13.4, −10.8, −15.8) mm):
// the run's outputs keep that place, so they overlay the source in ParaView. The image's
// origin is the centre of voxel 0; an output's cell-data Origin is the corner of cell 0.
TEST(IoOutputManager, OutputsKeepTheGeometrysOrigin) {
  ScratchDir dir("om_origin");
  ImageVolume img;
  img.sizes = {12, 6, 4};
  img.spacing = {0.25, 0.25, 0.5};
  img.origin = {-13.4, -10.8, -15.8};
  img.set_values(ScalarType::u8, std::vector<double>(img.voxels(), 1.0));
  write_nrrd(dir / "slab.nrrd", img);
  TissueCase c = planar_case(dir / "out");
  c.geometry.kind = GeometrySpec::Kind::mask_file;
  c.geometry.path = dir / "slab.nrrd";
  c.output.probes.clear();
  c.output.electrodes.clear();
  c.output.png_interval = 0;
  c.stimuli = {hw::tissue::testing::box_stimulus({0, 0, 0}, {0.6, 1.5, 2}, 200, 2)};
  const std::array<double, 3> corner{-13.4 - 0.125, -10.8 - 0.125, -15.8 - 0.25};
  for (auto format : {OutputSpec::Format::vtk, OutputSpec::Format::hdf5}) {
    c.output.format = format;
    SimulationOptions so;
    so.threads = 1;
    Simulation sim(c, so);
    for (int a = 0; a < 3; ++a) EXPECT_NEAR(sim.grid().origin[a], corner[a], 1e-12) << a;
    OutputManager out(c, sim);
    out.begin();
    sim.run_until(1, [&](const Simulation&) { out.after_step(); });
    out.finish();
    std::vector<std::string> files{"out/maps.vti"};
    if (format == OutputSpec::Format::vtk) files.push_back("out/fields_000000.vti");
    for (const auto& f : files) {
      XmlDoc x(dir / f);
      std::vector<xmlNodePtr> im;
      find_all(x.root(), "ImageData", im);
      ASSERT_EQ(im.size(), 1u) << f;
      std::istringstream o(attr(im[0], "Origin"));
      std::array<double, 3> got{};
      o >> got[0] >> got[1] >> got[2];
      for (int a = 0; a < 3; ++a) EXPECT_NEAR(got[a], corner[a], 1e-12) << f << " axis " << a;
    }
    if (format == OutputSpec::Format::hdf5) {
      XmlDoc x(dir / "out/fields.xdmf");
      std::vector<xmlNodePtr> items;
      find_all(x.root(), "DataItem", items);
      ASSERT_FALSE(items.empty());
      std::istringstream o(text(items[0]));  // z, y, x
      std::array<double, 3> got{};
      o >> got[2] >> got[1] >> got[0];
      for (int a = 0; a < 3; ++a) EXPECT_NEAR(got[a], corner[a], 1e-12) << "xdmf axis " << a;
    }
  }
}

// A dimensionless model (Karma 1993: its potential E has no units) is labelled by its own
// name, never "mV": in the traces' headers and on the pictures' colour bars.
TEST(IoOutputManager, DimensionlessModelIsNotLabelledMillivolts) {
  ScratchDir dir("om_karma");
  TissueCase c = planar_case(dir / "out");
  c.models[0].model = "karma1993";
  c.stimuli = {hw::tissue::testing::box_stimulus({0, 0, 0}, {0.6, 1.6, 0.2}, 3, 2)};
  c.time.dt = 0.05;
  c.output.activation_threshold = 1;
  c.output.apd_map = false;
  c.output.conduction_velocity = false;
  c.output.field_interval = 0;
  SimulationOptions so;
  so.threads = 1;
  Simulation sim(c, so);
  EXPECT_EQ(sim.variable_units("V").label(), "E (dimensionless)");
  EXPECT_EQ(sim.variable_units("n").units, "dimensionless");
  {
    OutputManager out(c, sim);
    out.begin();
    sim.run_until(2, [&](const Simulation&) { out.after_step(); });
    out.finish();
  }
  EXPECT_EQ(lines_of(dir / "out/probes.csv").front(), "t_ms,left_dimensionless,right_dimensionless");
  EXPECT_EQ(lines_of(dir / "out/ecg.csv").front(), "t_ms,ahead_dimensionless");
  bool unit_row = false;
  for (const auto& l : lines_of(dir / "out/maps_summary.csv")) unit_row |= l == "activation_threshold,1,dimensionless";
  EXPECT_TRUE(unit_row);
  // The frame's colour bar label is wider than "mV" would be: the bar's label band holds
  // ink across more than 80 pixels (17 glyphs of 7 px; "V (mV)" would be 42).
  const Image frame = read_png(dir / "out/V_00000.png");
  SnapshotOptions so2;
  const SnapshotLayout L = snapshot_layout(c.grid, {}, so2);
  int right = 0;
  for (int y = L.bar_y0 - text_height() - 4; y < L.bar_y0 - 4; ++y)
    for (int x = L.bar_x0; x < frame.width; ++x)
      if (frame.at(x, y) == Rgb{0, 0, 0}) right = std::max(right, x - L.bar_x0);
  EXPECT_GT(right, 80);
}
