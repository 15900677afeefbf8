// Output folders and restarts in the library: run.json round trips, which names are
// heartwave's, whose a folder is and what --overwrite removes (never a user's files), and
// how a restart's overrides merge with the checkpoint's.
#include <gtest/gtest.h>

#include <fstream>

#include "core/error.hpp"
#include "outputs/run_manifest.hpp"
#include "run/output_folder.hpp"
#include "run/restart_overrides.hpp"
#include "test_io_support.hpp"

using namespace hw;
using hw::io::testing::ScratchDir;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

io::RunManifest a_manifest() {
  io::RunManifest m;
  m.run_id = "20261126T000000Z-1-abcdef";
  m.case_path = "/cases/my \"case\".toml";
  m.case_hash = 0x0123456789abcdefull;
  m.overrides = {"time.t_end=200", "output.directory=\"out_int\""};
  m.version = "0.1.0";
  m.started = "2026-11-26T00:00:00Z";
  m.state = "stopped";
  m.t_ms = 61.5;
  m.files = {"checkpoint.hwck", "probes.csv", "run.json"};
  return m;
}

}  // namespace

TEST(RunManifest, JsonRoundTripKeepsEveryField) {
  // Arrange
  const io::RunManifest m = a_manifest();

  // Act
  const io::RunManifest back = io::parse_manifest(io::to_json(m), "run.json");

  // Assert
  EXPECT_EQ(back.run_id, m.run_id);
  EXPECT_EQ(back.case_path, m.case_path);
  EXPECT_EQ(back.case_hash, m.case_hash);
  EXPECT_EQ(back.overrides, m.overrides);
  EXPECT_EQ(back.version, m.version);
  EXPECT_EQ(back.started, m.started);
  EXPECT_EQ(back.state, m.state);
  EXPECT_EQ(back.t_ms, m.t_ms);
  EXPECT_EQ(back.files, m.files);
}

TEST(RunManifest, ForeignJsonIsRefusedSayingWhatToDo) {
  EXPECT_NE(error_of([] { io::parse_manifest("{\"a\": 1}", "x/run.json"); }).find("--overwrite"), std::string::npos);
  EXPECT_NE(error_of([] { io::parse_manifest("{\"format\": ", "x/run.json"); }).find("x/run.json"),
            std::string::npos);
}

TEST(RunManifest, HeartwaveNamesAreRecognisedAndOthersAreNot) {
  for (const char* f : {"run.json", "checkpoint.hwck", "fields.pvd", "fields_000012.vti", "fields.h5",
                        "fields_from_40.xdmf", "probes.csv", "ecg_from_80.csv", "maps.vti", "maps_summary.csv",
                        "activation.png", "last_good.vti", "V_00003.png", "Cai_00120.png", "checkpoint.hwck.tmpAb12Cd"})
    EXPECT_TRUE(io::is_heartwave_output(f)) << f;
  for (const char* f : {"notes.txt", "my_probes.csv", "fields.vti", "figure.png", "V_3.png", "case.toml", "run.json.bak"})
    EXPECT_FALSE(io::is_heartwave_output(f)) << f;
}

TEST(OutputFolder, AFolderOwnedByAnotherRunIsRefusedAndOverwriteRemovesOnlyItsFiles) {
  // Arrange: an earlier run's outputs (one listed only in its manifest), and a user's file.
  ScratchDir dir("folder_owned");
  io::RunManifest m = a_manifest();
  m.files = {"checkpoint.hwck", "probes.csv", "probes.png", "run.json"};
  for (const char* f : {"checkpoint.hwck", "probes.csv", "probes.png", "fields_000007.vti", "notes.txt"})
    std::ofstream(dir / f) << "x";
  io::write_manifest(dir.path.string(), m);
  const SourceLoc at{"case.toml", 3, 1};

  // Act
  const std::string refused = error_of([&] { run::check_output_folder(dir.path.string(), at, {}); });
  const std::string allowed = error_of([&] { run::check_output_folder(dir.path.string(), at, {true, "", ""}); });
  const std::vector<std::string> removed = run::clear_previous_outputs(dir.path.string());

  // Assert
  EXPECT_NE(refused.find("output.directory"), std::string::npos) << refused;
  EXPECT_NE(refused.find(m.run_id), std::string::npos) << refused;
  EXPECT_NE(refused.find("--set time.t_end=200"), std::string::npos) << refused;
  EXPECT_NE(refused.find("--overwrite"), std::string::npos) << refused;
  EXPECT_EQ(allowed, "");
  EXPECT_EQ(removed, (std::vector<std::string>{"checkpoint.hwck", "fields_000007.vti", "probes.csv", "probes.png",
                                               "run.json"}));
  EXPECT_EQ(io::files_in(dir.path.string()), std::vector<std::string>{"notes.txt"});
}

TEST(OutputFolder, UserFilesOnlyOrNothingIsFineAndTheRunItselfMayContinue) {
  ScratchDir dir("folder_free");
  const SourceLoc at{"case.toml", 3, 1};
  std::ofstream(dir / "notes.txt") << "mine";
  EXPECT_EQ(error_of([&] { run::check_output_folder(dir.path.string(), at, {}); }), "");
  EXPECT_EQ(error_of([&] { run::check_output_folder(dir / "new/deeper", at, {}); }), "");
  io::write_manifest(dir.path.string(), a_manifest());
  const std::string ckpt = dir / "checkpoint.hwck";
  EXPECT_EQ(error_of([&] { run::check_output_folder(dir.path.string(), at, {false, a_manifest().run_id, ckpt}); }),
            "");
  const std::string other = error_of([&] { run::check_output_folder(dir.path.string(), at, {false, "another", ckpt}); });
  EXPECT_NE(other.find("not of the run the checkpoint continues"), std::string::npos) << other;
}

TEST(OutputFolder, AFileWhereTheFolderShouldBeIsAnInputErrorNamingTheKeyAndPath) {
  ScratchDir dir("folder_file");
  std::ofstream(dir / "out") << "not a folder";
  const std::string e = error_of([&] { run::check_output_folder(dir / "out", {"case.toml", 9, 1}, {}); });
  EXPECT_NE(e.find("output.directory"), std::string::npos) << e;
  EXPECT_NE(e.find(dir / "out"), std::string::npos) << e;
  EXPECT_NE(e.find("case.toml:9"), std::string::npos) << e;
  const std::string below = error_of([&] { run::check_output_folder(dir / "out/sub", {"case.toml", 9, 1}, {}); });
  EXPECT_NE(below.find("is a file"), std::string::npos) << below;
}

TEST(RestartOverrides, TheCheckpointsOverridesHoldAndOnlyTimeAndOutputsMayChange) {
  // Arrange
  const std::vector<std::string> ck{"time.t_end=200", "output.directory=\"out_int\"", "conductivity.diffusivity=0.5"};

  // Act
  const auto merged = run::merge_restart_overrides(ck, {"time.t_end=400", "output.png_interval=5",
                                                        "conductivity.diffusivity = 0.5"}, "c.hwck");
  const std::string differs =
      error_of([&] { run::merge_restart_overrides(ck, {"conductivity.diffusivity=1.0"}, "c.hwck"); });
  const std::string unset = error_of([&] { run::merge_restart_overrides(ck, {"time.dt=0.01"}, "c.hwck"); });

  // Assert
  EXPECT_EQ(merged, (std::vector<std::string>{"time.t_end=400", "output.directory=\"out_int\"",
                                              "conductivity.diffusivity=0.5", "output.png_interval=5"}));
  EXPECT_NE(differs.find("conductivity.diffusivity = 0.5"), std::string::npos) << differs;
  EXPECT_NE(differs.find("conductivity.diffusivity = 1.0"), std::string::npos) << differs;
  EXPECT_NE(differs.find("c.hwck"), std::string::npos) << differs;
  EXPECT_NE(unset.find("did not set time.dt"), std::string::npos) << unset;
}
