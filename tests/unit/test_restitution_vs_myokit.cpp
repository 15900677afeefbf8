// Restitution curves against Myokit (tools/myokit_restitution.py), an implementation that
// shares nothing with ours: its own CellML import, CVODES and protocol engine.
//
// What is shared: the protocol (S1 count and BCL, the coupling intervals, the dynamic
// cycle lengths, the model's own stimulus amplitude and duration), the APD90 definition
// (cell/biomarkers.hpp, re-implemented in Python on a 0.01 ms log) and the 80 % capture
// rule. Ours runs its default integrator (RL2, dt 0.01 ms) through the same entry points
// as `heartwave restitution` (run_s1s2, run_dynamic).
//
// Bars: APD90(S1) and every captured APD90 within 1 ms (the bar of test_vs_myokit.cpp);
// capture decided the same way at every coupling interval and cycle length, except within
// 1 ms of Myokit's capture threshold, where the response grows steeply with the interval
// and a step-size difference moves it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cell/restitution.hpp"
#include "run/cell_run.hpp"
#include "verify_support.hpp"

namespace {

using namespace hw::verify;

struct Row {
  double x = 0, apd_s1 = 0, apd = 0;
  bool captured = false;
};

// The golden's rows: comment lines, a header, then numbers (nan allowed).
std::vector<Row> read_rows(const fs::path& path, bool with_s1) {
  std::ifstream in(path);
  std::vector<Row> rows;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::stringstream ss(line);
    std::string c;
    std::vector<double> v;
    while (std::getline(ss, c, ',')) v.push_back(std::strtod(c.c_str(), nullptr));
    Row r;
    r.x = v.at(0);
    r.apd_s1 = with_s1 ? v.at(1) : NAN;
    r.apd = v.at(with_s1 ? 2 : 1);
    r.captured = v.at(with_s1 ? 3 : 2) != 0;
    rows.push_back(r);
  }
  return rows;
}

fs::path golden(const std::string& file) { return fs::path(HW_TEST_DATA_DIR) / "golden" / "restitution" / file; }

hw::run::PreparedCell prepared(const std::string& model) {
  hw::run::CellRunOptions o;
  o.model = (shared_models_dir() / (model + ".cellml")).string();
  o.bcl_ms = 1000;
  return hw::run::prepare_cell(o);
}

// One CSV row: the numbers (NaN written as nan), then captured as 0/1.
std::string csv_row(std::initializer_list<double> numbers, bool captured) {
  std::string out;
  char buf[40];
  for (double x : numbers) {
    std::snprintf(buf, sizeof buf, "%.17g,", x);
    out += std::isnan(x) ? std::string("nan,") : std::string(buf);
  }
  return out + (captured ? "1" : "0");
}

// The shortest coupling interval at which the golden captured.
double threshold(const std::vector<Row>& rows) {
  double t = NAN;
  for (const Row& r : rows)
    if (r.captured && (std::isnan(t) || r.x < t)) t = r.x;
  return t;
}

// Our rows, for tools/make_verification_doc.py (which sets HW_VERIFY_OUT) to tabulate and
// draw beside the golden's; nothing is written otherwise.
void keep_rows(const std::string& file, const std::string& header, const std::vector<std::string>& lines) {
  const char* dir = std::getenv("HW_VERIFY_OUT");
  if (!dir) return;
  fs::create_directories(fs::path(dir) / "restitution");
  std::ofstream out(fs::path(dir) / "restitution" / file);
  out << header << "\n";
  for (const auto& l : lines) out << l << "\n";
}

class RestitutionVsMyokit : public ::testing::TestWithParam<std::string> {};

TEST_P(RestitutionVsMyokit, S1S2RowsMatch) {
  const std::string model = GetParam();
  if (!fs::exists(shared_models_dir() / (model + ".cellml"))) GTEST_SKIP() << "shared model not found: " << model;
  const auto ref = read_rows(golden(model + ".s1s2.csv"), true);
  ASSERT_FALSE(ref.empty()) << "no golden rows: " << golden(model + ".s1s2.csv");
  hw::run::PreparedCell p = prepared(model);
  hw::cell::RestitutionOptions o;
  o.s1_bcl_ms = 1000;
  o.n_s1 = 10;
  o.duration_ms = p.stim_duration_ms;
  for (const Row& r : ref) o.coupling_ms.push_back(r.x);
  const auto ours = hw::cell::run_s1s2(*p.kernel, p.setup, o, p.solver);
  ASSERT_EQ(ours.size(), ref.size());

  const double edge = threshold(ref);
  EXPECT_NEAR(ours[0].apd90_s1, ref[0].apd_s1, 1.0) << model << ": APD90(S1)";
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const bool near_edge = std::abs(ref[i].x - edge) <= 1.0;
    if (!near_edge) EXPECT_EQ(ours[i].captured, ref[i].captured) << model << " CI " << ref[i].x << " ms";
    if (ours[i].captured && ref[i].captured) {
      EXPECT_NEAR(ours[i].apd90_s2, ref[i].apd, 1.0) << model << " CI " << ref[i].x << " ms";
      worst = std::max(worst, std::abs(ours[i].apd90_s2 - ref[i].apd));
    }
  }
  std::vector<std::string> lines;
  for (const auto& r : ours)
    lines.push_back(csv_row({r.coupling_ms, r.apd90_s1, r.apd90_s2}, r.captured));
  keep_rows(model + ".s1s2.csv", "coupling_ms,apd90_s1,apd90_s2,captured", lines);
  double our_edge = NAN;
  for (const auto& r : ours)
    if (r.captured && std::isnan(our_edge)) our_edge = r.coupling_ms;
  std::printf("[measured] %s S1-S2 vs Myokit: APD90(S1) %.3f vs %.3f ms; first captured CI %.0f vs %.0f ms; "
              "max |dAPD90(S2)| %.3f ms over %zu rows\n",
              model.c_str(), ours[0].apd90_s1, ref[0].apd_s1, our_edge, edge, worst, ref.size());
}

TEST_P(RestitutionVsMyokit, DynamicRowsMatch) {
  const std::string model = GetParam();
  if (!fs::exists(shared_models_dir() / (model + ".cellml"))) GTEST_SKIP() << "shared model not found: " << model;
  const auto ref = read_rows(golden(model + ".dynamic.csv"), false);
  ASSERT_FALSE(ref.empty());
  hw::run::PreparedCell p = prepared(model);
  hw::cell::DynamicOptions o;
  o.beats = 20;
  o.duration_ms = p.stim_duration_ms;
  for (const Row& r : ref) o.bcl_ms.push_back(r.x);
  const auto ours = hw::cell::run_dynamic(*p.kernel, p.setup, o, p.solver);
  ASSERT_EQ(ours.size(), ref.size());
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    EXPECT_EQ(ours[i].captured, ref[i].captured) << model << " BCL " << ref[i].x << " ms";
    if (ours[i].captured && ref[i].captured) {
      EXPECT_NEAR(ours[i].apd90, ref[i].apd, 1.0) << model << " BCL " << ref[i].x << " ms";
      worst = std::max(worst, std::abs(ours[i].apd90 - ref[i].apd));
    }
  }
  std::vector<std::string> lines;
  for (const auto& r : ours) lines.push_back(csv_row({r.bcl_ms, r.apd90}, r.captured));
  keep_rows(model + ".dynamic.csv", "bcl_ms,apd90,captured", lines);
  std::printf("[measured] %s dynamic vs Myokit: max |dAPD90| %.3f ms over %zu cycle lengths\n", model.c_str(), worst,
              ref.size());
}

INSTANTIATE_TEST_SUITE_P(Models, RestitutionVsMyokit,
                         ::testing::Values("luo_rudy_1991", "tentusscher_panfilov_2006_epi"),
                         [](const auto& info) { return info.param; });

}  // namespace
