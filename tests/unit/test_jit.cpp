// The run-time compiler: printed C++ compiled by the system compiler into the cache,
// loaded, and checked against the IR oracle; the cache, the built-in match and the
// fallback when no compiler works.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "model/jit/builtin_registry.hpp"
#include "model/jit/jit.hpp"
#include "model/emit/cpp_printer.hpp"
#include "core/sha256.hpp"
#include "runtime/concept_kernel.hpp"
#include "test_codegen_support.hpp"

using namespace hw::model;

namespace {

// One compile shared by every test of this file.
const hw::cell::CellKernel& awkward_kernel(std::string* how = nullptr) {
  static const Model m = cgtest::awkward_model();
  static std::string how_first;
  static std::unique_ptr<hw::cell::CellKernel> k = [] {
    cgtest::use_test_cache();
    return make_kernel(m, KernelChoice::compiled, &how_first);
  }();
  if (how) *how = how_first;
  return *k;
}

// Restores an environment variable when the test ends.
struct ScopedEnv {
  std::string name, old;
  bool had;
  ScopedEnv(const char* n, const char* value) : name(n), had(std::getenv(n) != nullptr) {
    if (had) old = std::getenv(n);
    setenv(n, value, 1);
  }
  ~ScopedEnv() {
    if (had) setenv(name.c_str(), old.c_str(), 1);
    else unsetenv(name.c_str());
  }
};

}  // namespace

TEST(Sha256, KnownDigests) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Jit, CompiledAwkwardModelMatchesTheOracle) {
  std::string how;
  const auto& k = awkward_kernel(&how);
  EXPECT_NE(how.find("compiled C++ (cached: "), std::string::npos) << how;
  const Model m = cgtest::awkward_model();
  cgtest::expect_functions_match(m, k, 1e-12);
  cgtest::expect_steps_match<double>(m, k, 0.01, 1e-12);
  cgtest::expect_steps_match<float>(m, k, 0.01, 1e-5);
}

TEST(Jit, SecondRequestLoadsTheCachedLibrary) {
  std::string first, second;
  awkward_kernel(&first);
  auto again = make_kernel(cgtest::awkward_model(), KernelChoice::compiled, &second);
  EXPECT_EQ(first, second);  // same cache file, no recompilation needed
  EXPECT_EQ(again->n_states(), 2);
}

TEST(Jit, AKernelOutlivesNothingItNeeds) {
  // Two kernels from one library, destroyed in turn: the library stays loaded for the other.
  auto a = make_kernel(cgtest::awkward_model(), KernelChoice::compiled);
  auto b = make_kernel(cgtest::awkward_model(), KernelChoice::compiled);
  a.reset();
  double p[4] = {0.5, 2.0, -1.25, 0.3}, c[2];
  b->constants(p, c);
  EXPECT_NEAR(c[1], (0.5 * 2.0 + std::sqrt(0.3)) / 3.0, 1e-15);
}

TEST(Jit, MissingCompilerIsAnErrorWhenCompiledIsRequired) {
  cgtest::use_test_cache();
  Model m = cgtest::awkward_model();
  m.parameters[0].value = 0.75;  // a different source, so nothing is cached
  ScopedEnv cxx("HEARTWAVE_CXX", "/nonexistent/heartwave-no-such-compiler");
  try {
    make_kernel(m, KernelChoice::compiled);
    FAIL() << "expected hw::Error";
  } catch (const hw::Error& e) {
    EXPECT_NE(std::string(e.what()).find("heartwave-no-such-compiler"), std::string::npos) << e.what();
  }
}

TEST(Jit, CompilerErrorsCarryTheLog) {
  cgtest::use_test_cache();
  EXPECT_THROW(
      {
        try {
          compile_cpp_kernel("this is not C++;\n", "hw_model_make_kernel");
        } catch (const hw::Error& e) {
          EXPECT_NE(std::string(e.what()).find("error"), std::string::npos) << e.what();
          throw;
        }
      },
      hw::Error);
}

TEST(Jit, MissingCompilerFallsBackToTheInterpreterAndSaysSo) {
  cgtest::use_test_cache();
  Model m = cgtest::awkward_model();
  m.parameters[0].value = 0.625;
  ScopedEnv cxx("HEARTWAVE_CXX", "/nonexistent/heartwave-no-such-compiler");
  std::string how;
  auto k = make_kernel(m, KernelChoice::automatic, &how);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(how.rfind("interpreter (compiler failed: ", 0), 0u) << how;
  EXPECT_EQ(k->describe().rfind("interpreter", 0), 0u);
}

namespace {
Model& registered_model() {
  static Model m = [] {
    Model x = cgtest::awkward_model();
    x.parameters[3].value = 0.125;  // differs from the other tests' model
    return x;
  }();
  return m;
}
hw::cell::CellKernel* make_registered() {
  return new hw::cell::ConceptKernel<cgtest::EvalModel>(
      cgtest::EvalModel{&registered_model()}, "test built-in");
}
}  // namespace

TEST(Jit, ABuiltinWithTheSameHashIsUsedWithoutCompiling) {
  register_builtin({"test-awkward", "", model_cpp_hash(registered_model()), &make_registered});
  ScopedEnv cxx("HEARTWAVE_CXX", "/nonexistent/heartwave-no-such-compiler");
  std::string how;
  auto k = make_kernel(registered_model(), KernelChoice::compiled, &how);
  EXPECT_EQ(how, "compiled C++ (built-in test-awkward)");
  EXPECT_NE(find_builtin("test-awkward"), nullptr);
}

// The cache keeps the most recently used libraries within its byte limit, never the one
// just built, and clears day-old temporaries of crashed compiles.
TEST(Jit, PruningDropsTheLeastRecentlyUsedLibraries) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("hw_prune_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto now = fs::file_time_type::clock::now();
  auto make = [&](const std::string& name, std::size_t bytes, int hours_ago) {
    std::ofstream(dir / name) << std::string(bytes, 'x');
    fs::last_write_time(dir / name, now - std::chrono::hours(hours_ago));
  };
  make("model_a.so", 1000, 1);   // newest
  make("model_a.cpp", 10, 1);
  make("model_b.so", 1000, 5);
  make("model_b.cpp", 10, 5);
  make("model_c.so", 1000, 9);   // oldest, but the one just built
  make("model_d.so", 1000, 7);
  make("model_d.cpp", 10, 7);
  make("model_e.so.tmp.1", 50, 30);  // a crashed compile's leftovers
  make("model_f.log.2", 50, 2);      // a compile still running elsewhere
  make("notes.txt", 5000, 100);      // not the cache's
  const auto freed = prune_jit_cache(dir.string(), 2500, (dir / "model_c.so").string());
  // a (1000) and b (2000 in total) fit; d goes with its source; c stays as `keep`.
  EXPECT_TRUE(fs::exists(dir / "model_a.so"));
  EXPECT_TRUE(fs::exists(dir / "model_b.so"));
  EXPECT_TRUE(fs::exists(dir / "model_c.so"));
  EXPECT_FALSE(fs::exists(dir / "model_d.so"));
  EXPECT_FALSE(fs::exists(dir / "model_d.cpp"));
  EXPECT_FALSE(fs::exists(dir / "model_e.so.tmp.1"));
  EXPECT_TRUE(fs::exists(dir / "model_f.log.2"));
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
  EXPECT_EQ(freed, 1000u + 10u + 50u);
  fs::remove_all(dir);
}

// A cached library is keyed on the text of the headers it was compiled against, not only on
// their folder: a rebuilt Heartwave with changed integrators (same checkout path, same
// cache) must compile afresh rather than load a library that steps the old way.
TEST(Jit, AChangedRuntimeHeaderIsACacheMiss) {
  namespace fs = std::filesystem;
  cgtest::use_test_cache();
  const fs::path inc = fs::temp_directory_path() / ("hw_headers_" + std::to_string(::getpid()));
  fs::remove_all(inc);
  const auto names = runtime_header_names();
  ASSERT_EQ(names.size(), 3u);  // cell_kernel.hpp, integrators.hpp, error.hpp
  for (const std::string& name : names) {
    fs::create_directories((inc / name).parent_path());
    fs::copy_file(fs::path(HW_RUNTIME_INCLUDE_DIR) / name, inc / name);
  }
  ScopedEnv include("HEARTWAVE_RUNTIME_INCLUDE", inc.c_str());
  const Model m = cgtest::awkward_model();
  const std::string source = print_cpp(m);
  std::string before, same, after;
  compile_cpp_kernel(source, cpp_factory_symbol(CppOptions{}), &before);
  compile_cpp_kernel(source, cpp_factory_symbol(CppOptions{}), &same);
  std::ofstream(inc / "runtime/integrators.hpp", std::ios::app) << "\n// an edit\n";
  auto k = compile_cpp_kernel(source, cpp_factory_symbol(CppOptions{}), &after);
  EXPECT_EQ(before, same);
  EXPECT_NE(before, after);
  EXPECT_EQ(k->n_states(), 2);
  fs::remove_all(inc);
}
