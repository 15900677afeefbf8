// Every shared CellML model survives export to CellML 2.0 and to SBML and import back:
// the same states (names, order, initial values) and parameters, and the same paced V
// trace to rounding (the printers keep every expression tree, mathml_printer.hpp). The
// trace runs long enough for the upstroke and most of the plateau; the stiff models for
// less. Also: export → import → export gives the same text (a fixed point).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "model/emit/cellml2_printer.hpp"
#include "model/emit/sbml_printer.hpp"
#include "model/frontend/sbml/sbml.hpp"
#include "model_trace_support.hpp"

namespace {

namespace fs = std::filesystem;

struct Case {
  const char* file;
  double ms;  // length of the compared trace
};

const Case kCases[] = {
    {"beeler_reuter_1977.cellml", 300},
    {"bueno_orovio_cherry_fenton_2008_epi.cellml", 300},
    {"courtemanche_ramirez_nattel_1998.cellml", 100},
    {"fenton_karma_1998.cellml", 300},
    {"fitzhugh_nagumo_1961.cellml", 300},
    {"hodgkin_huxley_1952.cellml", 50},
    {"luo_rudy_1991.cellml", 300},
    {"mitchell_schaeffer_2003.cellml", 300},
    {"noble_1962.cellml", 300},
    {"ohara_rudy_2011_endo.cellml", 50},
    {"tentusscher_panfilov_2006_epi.cellml", 100},
};

// A fresh folder per test (the test's name holds a '/', so it is two levels deep).
fs::path scratch_dir() {
  const fs::path d = fs::temp_directory_path() / ("hw_roundtrip_" + std::to_string(::getpid())) /
                     ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::create_directories(d);
  return d;
}

std::string write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

void expect_same_symbols(const hw::model::Model& a, const hw::model::Model& b) {
  ASSERT_EQ(a.states.size(), b.states.size());
  for (std::size_t i = 0; i < a.states.size(); ++i) {
    EXPECT_EQ(a.states[i].name, b.states[i].name);
    EXPECT_EQ(a.states[i].initial, b.states[i].initial) << a.states[i].name;
  }
  ASSERT_EQ(a.parameters.size(), b.parameters.size());
  for (std::size_t i = 0; i < a.parameters.size(); ++i) {
    EXPECT_EQ(a.parameters[i].name, b.parameters[i].name);
    EXPECT_EQ(a.parameters[i].value, b.parameters[i].value) << a.parameters[i].name;
  }
  EXPECT_EQ(a.algebraics.size(), b.algebraics.size());
  EXPECT_EQ(a.roles.voltage_state, b.roles.voltage_state);
  EXPECT_EQ(a.roles.stimulus_current, b.roles.stimulus_current);
  EXPECT_EQ(a.roles.time_to_ms, b.roles.time_to_ms);
  EXPECT_EQ(a.roles.voltage_to_mV, b.roles.voltage_to_mV);
}

class RoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(RoundTrip, CellmlTwoAndSbmlGiveTheSameTrace) {
  const fs::path source = fs::path(HW_SHARED_DIR) / "models/cellml" / GetParam().file;
  if (!fs::exists(source)) GTEST_SKIP() << source << " not found (../shared absent)";
  // Arrange: the model as read, printed in both formats.
  const auto original = hw::model::load_model(source.string());
  const fs::path dir = scratch_dir();
  const std::string stem = fs::path(GetParam().file).stem().string();
  const std::string cellml2 = write(dir / (stem + ".cellml"), hw::model::print_cellml2(original.source));
  std::vector<std::pair<std::string, std::string>> files = {{"CellML 2.0", cellml2}};
  if (hw::model::sbml_reader_available())
    files.emplace_back("SBML", write(dir / (stem + ".sbml"), hw::model::print_sbml(original.source)));
  const int steps = static_cast<int>(GetParam().ms / 0.01);
  const auto reference = hw::test::paced_v_trace(original, 0.01, steps);
  for (const auto& [format, file] : files) {
    // Act: import the printed file and pace it as the original.
    const auto back = hw::model::load_model(file);
    const auto trace = hw::test::paced_v_trace(back, 0.01, steps);
    // Assert: same symbols and the same trace to rounding.
    expect_same_symbols(original.source, back.source);
    const double worst = hw::test::max_abs_difference(reference, trace);
    EXPECT_LT(worst, 1e-9) << stem << " through " << format << ": max |dV| " << worst << " mV";
    RecordProperty(format == "SBML" ? "max_dV_sbml" : "max_dV_cellml2", std::to_string(worst));
    std::cout << "[ round trip ] " << stem << " via " << format << ": max |dV| = " << worst
              << " mV over " << GetParam().ms << " ms\n";
  }
  const double rise = *std::max_element(reference.begin(), reference.end()) - reference.front();
  EXPECT_GT(rise, 0.1 * std::max(1.0, std::fabs(reference.front()))) << "no upstroke was paced";
  fs::remove_all(dir);
}

TEST_P(RoundTrip, PrintingIsAFixedPoint) {
  const fs::path source = fs::path(HW_SHARED_DIR) / "models/cellml" / GetParam().file;
  if (!fs::exists(source)) GTEST_SKIP() << source << " not found (../shared absent)";
  const fs::path dir = scratch_dir();
  const std::string stem = fs::path(GetParam().file).stem().string();
  const auto m = hw::model::read_model_file(source.string());
  const std::string once = hw::model::print_cellml2(m);
  auto back = hw::model::read_model_file(write(dir / "once.cellml", once));
  back.source_file = m.source_file;
  EXPECT_EQ(hw::model::print_cellml2(back), once) << stem;
  if (hw::model::sbml_reader_available()) {
    const std::string sbml = hw::model::print_sbml(m);
    auto again = hw::model::read_model_file(write(dir / "once.sbml", sbml));
    again.source_file = m.source_file;
    again.name = m.name;
    EXPECT_EQ(hw::model::print_sbml(again), sbml) << stem;
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(SharedModels, RoundTrip, ::testing::ValuesIn(kCases), [](const auto& info) {
  std::string n = fs::path(info.param.file).stem().string();
  return n;
});

}  // namespace
