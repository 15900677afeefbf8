// Problems in a case are collected, not stopped at the first: each with its key, its
// file:line and a stable code (tissue/case_codes.hpp), all in one hw::InputError whose
// message has one line per problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>
#include <string>

#include "core/error.hpp"
#include "run/case_file.hpp"
#include "tissue/case_codes.hpp"
#include "tissue/reaction.hpp"

namespace {

using hw::InputError;
namespace case_code = hw::tissue::case_code;

std::vector<hw::Diagnostic> problems_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    // One line per problem in the message (the model's own notes may add more lines).
    const std::string what = e.what();
    EXPECT_GE(std::count(what.begin(), what.end(), '\n') + 1, std::ptrdiff_t(e.diagnostics().size()));
    return e.diagnostics();
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

}  // namespace

TEST(CaseProblems, ThreeMistakesInTheFileAreAllReportedWithCodesAndLines) {
  // Arrange: a duration below 0 (line 9), dt = 0 (line 11), a misspelt key (line 13).
  const char* toml = R"([grid]
size = [10, 10]
spacing = 0.5
[[model]]
name = "aliev_panfilov_1996"
[[stimulus]]
region = { kind = "all" }
amplitude = 1
duration = -1
[time]
dt = 0
t_end = 10
integrater = "rk4"
)";

  // Act
  const auto d = problems_of([&] { hw::io::parse_case(toml, "three.toml"); });

  // Assert
  ASSERT_EQ(d.size(), 3u);
  auto find = [&](const std::string& words) {
    for (const auto& x : d)
      if (x.message.find(words) != std::string::npos) return x;
    ADD_FAILURE() << "no problem says: " << words;
    return hw::Diagnostic{};
  };
  const auto duration = find("stimulus[0].duration must be > 0 ms");
  EXPECT_EQ(duration.loc.line, 9);
  EXPECT_EQ(duration.code, case_code::out_of_range);
  const auto dt = find("time.dt = 0 ms must be > 0");
  EXPECT_EQ(dt.loc.line, 11);
  EXPECT_EQ(dt.code, case_code::out_of_range);
  const auto key = find("unknown key 'time.integrater'");
  EXPECT_EQ(key.loc.line, 13);
  EXPECT_EQ(key.code, case_code::unknown_key);
  for (const auto& x : d) {
    EXPECT_EQ(x.loc.file, "three.toml");
    EXPECT_NE(x.str().find("[" + x.code + "]"), std::string::npos) << x.str();
  }
}

TEST(CaseProblems, TheSetUpCollectsNamesNoModelHas) {
  // Arrange: a valid file whose names the model lacks: a parameter (line 6), a gradient's
  // parameter and an initial condition's state.
  const char* toml = R"([grid]
size = [10, 10]
spacing = 0.5
[[model]]
name = "aliev_panfilov_1996"
params = { not_a_param = 1 }
[[gradient]]
param = "nothing"
[[initial]]
variable = "no_such_state"
value = 1
[time]
dt = 0.05
t_end = 10
)";
  const hw::tissue::TissueCase c = hw::io::parse_case(toml, "names.toml");

  // Act
  const auto d = problems_of([&] { hw::tissue::prepare_setup(c); });

  // Assert
  ASSERT_EQ(d.size(), 3u);
  std::set<std::string> keys;
  for (const auto& x : d) {
    EXPECT_EQ(x.code, case_code::unknown_name) << x.str();
    EXPECT_EQ(x.loc.file, "names.toml");
    EXPECT_GT(x.loc.line, 0) << x.str();
    keys.insert(x.message.substr(0, x.message.find(':')));
  }
  EXPECT_EQ(keys, (std::set<std::string>{"model[0].params.not_a_param", "gradient[0].param", "initial[0].variable"}));
}

TEST(CaseProblems, AnUnstableDtHasItsCode) {
  std::string toml = R"([grid]
size = [10, 10]
spacing = 0.1
[[model]]
name = "aliev_panfilov_1996"
[time]
dt = 1.0
t_end = 10
)";
  const hw::tissue::TissueCase c = hw::io::parse_case(toml, "dt.toml");
  const auto d = problems_of([&] { hw::tissue::make_sim_setup(c, false); });
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].code, case_code::unstable_dt);
  EXPECT_EQ(d[0].loc.line, 7);
  EXPECT_NE(d[0].message.find("stability limit"), std::string::npos) << d[0].message;
}

TEST(CaseProblems, CodesAreUniqueAndInOrder) {
  std::set<std::string> seen;
  int n = 0;
  for (const auto& info : case_code::all) {
    ++n;
    char want[16];
    std::snprintf(want, sizeof want, "HW-CASE-%03d", n);
    EXPECT_EQ(std::string(info.code), want);
    EXPECT_TRUE(seen.insert(info.code).second) << info.code;
    EXPECT_GT(std::string(info.meaning).size(), 10u);
  }
}

TEST(CaseProblems, ProbesWithNoFieldToTraceAreRefusedBeforeTheRun) {
  // An empty output.fields (a run that writes no field) with probes: before, the run went to
  // its end and then failed drawing probes.png with nothing in it.
  const char* toml = R"([grid]
size = [10, 10]
spacing = 0.5
[[model]]
name = "aliev_panfilov_1996"
[time]
dt = 0.02
t_end = 10
[output]
fields = []
probes = [{ name = "p", position = [1, 1] }]
)";
  const auto d = problems_of([&] { hw::io::parse_case(toml, "probes.toml"); });
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("output.probes trace the variables of output.fields"), std::string::npos) << d[0].message;
  EXPECT_EQ(d[0].loc.line, 11);  // the probes line
  // Probes with the default fields, and an empty fields without probes, are fine.
  EXPECT_NO_THROW(hw::io::parse_case(std::string(toml).replace(std::string(toml).find("fields = []\n"), 12, ""), "p.toml"));
}
