// The case-file reader: every section's keys land in TissueCase with the documented units,
// and mistakes (unknown keys, wrong types, ranges, --set) are located errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/error.hpp"
#include "run/case_file.hpp"

namespace {

using hw::InputError;
using namespace hw::tissue;
namespace fs = std::filesystem;

const char* kFull = R"(
name = "full"
description = "every section"
[grid]
size = [40, 20, 4]
spacing = [0.25, 0.5, 1.0]
boundary = ["periodic", "no-flux", "no-flux"]
[geometry]
kind = "slab-with-hole"
hole_radius = 2
[fibres]
kind = "rotating"
from = 45
to = -30
axis = "z"
[conductivity]
sigma_l = 0.2
sigma_t = 0.05
sigma_n = 0.01
chi_per_cm = 1400
cm_uF_per_cm2 = 1.0
stencil = "second"
[[model]]
name = "tentusscher_2006_epi"
params = { g_Ks = 0.098 }
scale = { g_to = 0.5 }
[[model]]
name = "tentusscher_2006_endo"
region = { kind = "box", lo = [0, 0, 0], hi = [5, 10, 4] }
[[gradient]]
param = "g_Ks"
axis = "z"
from = 1.0
to = 0.5
[[stimulus]]
region = { kind = "sphere", centre = [5, 5, 2], radius = 1 }
amplitude_uA_per_cm3 = 50000
start = 1
duration = 2
period = 500
count = 3
[[stimulus]]
region = { kind = "face", face = "x-", depth = 0.5 }
amplitude = 40
[[initial]]
region = { kind = "box", lo = [0, 0], hi = [5, 5] }
variable = "V"
value = 20
[time]
dt = 0.02
t_end = 50
ode_substeps = 2
integrator = "rk2"
splitting = "strang"
diffusion = "crank-nicolson"
precision = "double"
cg_tolerance = 1e-9
cg_max_iterations = 250
[output]
directory = "res"
fields = ["V", "Ca_i"]
field_interval = 5
format = "hdf5"
probes = [{ name = "a", position = [1, 1, 1] }, { name = "b", position = [2, 2] }]
probe_interval = 0.5
activation_map = true
activation_threshold = -30
apd_map = true
conduction_velocity = true
electrodes = [{ name = "e", position = [50, 5, 2] }]
png_interval = 2
png_variable = "V"
png_slice_axis = "y"
png_slice_position = 3
movie = true
checkpoint_interval = 10
)";

TEST(CaseFile, ReadsEveryKeyWithItsUnits) {
  // Act
  TissueCase c = hw::io::parse_case(kFull, "full.toml");

  // Assert
  EXPECT_EQ(c.name, "full");
  EXPECT_EQ(c.grid.n, (std::array<int, 3>{40, 20, 4}));
  EXPECT_DOUBLE_EQ(c.grid.h[1], 0.5);
  EXPECT_EQ(c.grid.bc[0], Boundary::periodic);
  EXPECT_EQ(c.grid.bc[1], Boundary::no_flux);
  EXPECT_EQ(c.geometry.kind, GeometrySpec::Kind::slab_with_hole);
  EXPECT_DOUBLE_EQ(c.geometry.hole_radius, 2);
  EXPECT_EQ(c.fibres.kind, FibreSpec::Kind::rotating);
  EXPECT_DOUBLE_EQ(c.fibres.angle_from, 45);
  EXPECT_DOUBLE_EQ(c.fibres.angle_to, -30);
  EXPECT_EQ(c.fibres.axis, 2);
  EXPECT_DOUBLE_EQ(c.conductivity.sigma_l, 0.2);
  EXPECT_DOUBLE_EQ(c.conductivity.sigma_t, 0.05);
  EXPECT_DOUBLE_EQ(*c.conductivity.sigma_n, 0.01);
  EXPECT_DOUBLE_EQ(c.conductivity.chi, 140);   // 1400 /cm → /mm
  EXPECT_DOUBLE_EQ(c.conductivity.cm, 0.01);   // 1 µF/cm² → µF/mm²
  ASSERT_EQ(c.models.size(), 2u);
  EXPECT_EQ(c.models[0].model, "tentusscher_2006_epi");
  EXPECT_EQ(c.models[0].where.kind, Region::Kind::all);
  EXPECT_DOUBLE_EQ(c.models[0].params.at("g_Ks"), 0.098);
  EXPECT_DOUBLE_EQ(c.models[0].scales.at("g_to"), 0.5);
  EXPECT_EQ(c.models[1].where.kind, Region::Kind::box);
  EXPECT_DOUBLE_EQ(c.models[1].where.hi[0], 5);
  EXPECT_EQ(c.models[1].loc.line, 28);  // the name key's line
  ASSERT_EQ(c.gradients.size(), 1u);
  EXPECT_EQ(c.gradients[0].axis, 2);
  EXPECT_DOUBLE_EQ(c.gradients[0].to, 0.5);
  EXPECT_TRUE(c.gradients[0].scale);
  ASSERT_EQ(c.stimuli.size(), 2u);
  EXPECT_DOUBLE_EQ(c.stimuli[0].amplitude, 50);  // µA/cm³ → µA/mm³
  EXPECT_EQ(c.stimuli[0].where.kind, Region::Kind::sphere);
  EXPECT_DOUBLE_EQ(c.stimuli[0].period, 500);
  EXPECT_EQ(c.stimuli[0].count, 3);
  EXPECT_EQ(c.stimuli[1].where.face, "x-");
  EXPECT_DOUBLE_EQ(c.stimuli[1].where.depth, 0.5);
  EXPECT_DOUBLE_EQ(c.stimuli[1].amplitude, 40);
  ASSERT_EQ(c.initial.size(), 1u);
  EXPECT_DOUBLE_EQ(c.initial[0].where.hi[2], 4.0);  // z not given: the whole thickness
  EXPECT_DOUBLE_EQ(c.initial[0].value, 20);
  EXPECT_DOUBLE_EQ(c.time.dt, 0.02);
  EXPECT_EQ(c.time.ode_substeps, 2);
  EXPECT_EQ(c.time.integrator, "rk2");
  EXPECT_EQ(c.time.splitting, Splitting::strang);
  EXPECT_EQ(c.time.diffusion, DiffusionScheme::crank_nicolson);
  EXPECT_EQ(c.time.precision, Precision::f64);
  EXPECT_DOUBLE_EQ(c.time.cg_tolerance, 1e-9);
  EXPECT_EQ(c.time.cg_max_iterations, 250);
  EXPECT_EQ(c.output.directory, "res");
  EXPECT_EQ(c.output.variables, (std::vector<std::string>{"V", "Ca_i"}));
  EXPECT_EQ(c.output.format, OutputSpec::Format::hdf5);
  ASSERT_EQ(c.output.probes.size(), 2u);
  EXPECT_DOUBLE_EQ(c.output.probes[1].position[2], 2.0);  // 2 numbers: the middle in z
  EXPECT_TRUE(c.output.activation_map && c.output.apd_map && c.output.conduction_velocity && c.output.movie);
  EXPECT_DOUBLE_EQ(c.output.activation_threshold, -30);
  EXPECT_EQ(c.output.electrodes.size(), 1u);
  EXPECT_EQ(c.output.png_slice_axis, 1);
  EXPECT_DOUBLE_EQ(c.output.checkpoint_interval, 10);
}

std::string error_of(const std::string& toml, const std::vector<std::string>& sets = {}) {
  try {
    hw::io::parse_case(toml, "bad.toml", sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const char* kMinimal = R"([grid]
size = [10, 10]
spacing = 0.5
[[model]]
name = "aliev_panfilov_1996"
[time]
dt = 0.05
t_end = 10
)";

TEST(CaseFile, MinimalCaseHasDocumentedDefaults) {
  TissueCase c = hw::io::parse_case(kMinimal, "dir/min.toml");
  EXPECT_EQ(c.name, "min");
  EXPECT_EQ(c.grid.n, (std::array<int, 3>{10, 10, 1}));
  EXPECT_DOUBLE_EQ(c.grid.h[2], 0.5);
  EXPECT_EQ(c.time.integrator, "auto");
  EXPECT_EQ(c.time.precision, Precision::f32);
  EXPECT_EQ(c.output.directory, "out");
  EXPECT_DOUBLE_EQ(c.conductivity.chi, 140);
}

TEST(CaseFile, UnknownKeyIsAnErrorWithLineAndSuggestion) {
  std::string toml = kMinimal;
  toml += "dtt = 3\n";  // line 9, inside [time]
  const std::string e = error_of(toml);
  EXPECT_NE(e.find("bad.toml:9:7"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown key 'time.dtt'"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'time.dt'"), std::string::npos) << e;
}

TEST(CaseFile, WrongTypesAreAllReportedTogether) {
  const std::string e = error_of(R"([grid]
size = "big"
spacing = 0.5
[[model]]
name = 3
[time]
dt = "small"
t_end = 10
)");
  EXPECT_NE(e.find("bad.toml:2:8: error: grid.size must be an array"), std::string::npos) << e;
  EXPECT_NE(e.find("bad.toml:5:8: error: model[0].name must be a string, not an integer"), std::string::npos) << e;
  EXPECT_NE(e.find("bad.toml:7:6: error: time.dt must be a number, not a string"), std::string::npos) << e;
}

TEST(CaseFile, RangesAndMissingPiecesAreErrors) {
  EXPECT_NE(error_of("[grid]\nsize=[10]\nspacing=-1\n[[model]]\nname='mfhn'\n[time]\ndt=0.1\nt_end=1\n")
                .find("grid.spacing: dx = -1"), std::string::npos);
  EXPECT_NE(error_of("[grid]\nsize=[10]\nspacing=1\n[time]\ndt=0.1\nt_end=1\n").find("missing model"),
            std::string::npos);
  std::string bad_region = kMinimal;
  bad_region += "[[stimulus]]\nregion = {lo = [0, 0], hi = [6, 2]}\namplitude = 1\n";
  EXPECT_NE(error_of(bad_region).find("reaches outside the domain"), std::string::npos) << error_of(bad_region);
  std::string bad_probe = kMinimal;
  bad_probe += "[output]\nprobes = [{name = \"p\", position = [1, 9]}]\n";
  EXPECT_NE(error_of(bad_probe).find("output.probes[0] 'p' at (1, 9, 0.25) mm is outside"), std::string::npos)
      << error_of(bad_probe);
  EXPECT_NE(error_of(std::string(kMinimal) + "integrator = \"euler\"\n").find("time.integrator = \"euler\" is not one of"),
            std::string::npos);
  EXPECT_NE(error_of("[grid\n").find("bad.toml:1:"), std::string::npos);
}

TEST(CaseFile, OverridesApplyBeforeValidationAndAreLocated) {
  // Act
  TissueCase c = hw::io::parse_case(kMinimal, "m.toml",
                                    {"time.dt=0.01", "time.integrator=rk4", "model.0.params.k=9",
                                     "output.fields=[\"V\", \"v\"]", "stimulus=[{amplitude=2, region={kind=\"all\"}}]"});
  // Assert
  EXPECT_DOUBLE_EQ(c.time.dt, 0.01);
  EXPECT_EQ(c.time.integrator, "rk4");
  EXPECT_DOUBLE_EQ(c.models[0].params.at("k"), 9);
  EXPECT_EQ(c.output.variables.size(), 2u);
  ASSERT_EQ(c.stimuli.size(), 1u);
  EXPECT_DOUBLE_EQ(c.stimuli[0].amplitude, 2);

  EXPECT_NE(error_of(kMinimal, {"time.dtt=1"}).find("--set time.dtt=1: error: unknown key 'time.dtt'"),
            std::string::npos);
  EXPECT_NE(error_of(kMinimal, {"time.dt=abc"}).find("--set time.dt=abc: error: time.dt must be a number"),
            std::string::npos);
  EXPECT_NE(error_of(kMinimal, {"model.4.name=x"}).find("there is 1 entry"), std::string::npos);
  EXPECT_NE(error_of(kMinimal, {"nonsense"}).find("key.path=value"), std::string::npos);
}

TEST(CaseFile, EveryExampleParses) {
  const fs::path dir = fs::path(HW_TEST_DATA_DIR).parent_path() / "examples";
  int parsed = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".toml") continue;
    // The hearts' examples (pig, rabbit) read their images from ../shared: without it, skipped.
    std::ifstream in(e.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("/shared/") != std::string::npos && !fs::exists(HW_SHARED_DIR)) {
      std::printf("[skipped] %s: it needs ../shared, absent here\n", e.path().filename().c_str());
      continue;
    }
    EXPECT_NO_THROW(hw::io::read_case_file(e.path().string())) << e.path();
    ++parsed;
  }
  EXPECT_GE(parsed, 5);
}

}  // namespace
