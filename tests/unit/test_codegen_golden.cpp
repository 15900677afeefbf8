// Golden files of generated code for a few real models, so that any change to what the
// printers emit shows up as a reviewable diff. HW_UPDATE_GOLDEN=1 rewrites them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/emit/cpp_printer.hpp"
#include "model/emit/cuda_printer.hpp"
#include "model/frontend/cellml/cellml.hpp"
#include "model/frontend/hwm/hwm.hpp"
#include "model/passes/pipeline.hpp"

using namespace hw::model;
namespace fs = std::filesystem;

namespace {

void check_golden(const std::string& name, const std::string& text) {
  const fs::path path = fs::path(HW_TEST_DATA_DIR) / "golden" / "codegen" / name;
  const char* update = std::getenv("HW_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << " is missing: run the tests with HW_UPDATE_GOLDEN=1 to create it";
  std::ostringstream want;
  want << in.rdbuf();
  EXPECT_TRUE(want.str() == text)
      << "generated code for " << name << " changed; review the diff after rerunning with "
      << "HW_UPDATE_GOLDEN=1 (git diff tests/golden/codegen)";
}

void golden_for(const fs::path& file, const std::string& stem) {
  if (!fs::exists(file)) GTEST_SKIP() << file << " not found";
  Model m = file.extension() == ".hwm" ? load_hwm(file.string()) : load_cellml(file.string());
  hw::DiagnosticSink sink;
  run_pipeline(m, PipelineOptions{}, sink);
  check_golden(stem + ".cpp", print_cpp(m));
  check_golden(stem + ".cu", print_cuda(m));
}

}  // namespace

TEST(CodegenGolden, Mfhn) { golden_for(fs::path(HW_MODELS_DIR) / "mfhn.hwm", "mfhn"); }

TEST(CodegenGolden, LuoRudy1991) {
  golden_for(fs::path(HW_SHARED_DIR) / "models" / "cellml" / "luo_rudy_1991.cellml", "luo_rudy_1991");
}
