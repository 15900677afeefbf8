// What the fuzz targets that read through files share: the readers take paths, so each
// process writes its input into a scratch folder of its own, and a harness-level finding
// (the reader accepted something that then failed) is reported by abort, which libFuzzer
// keeps as a crash input.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace hw_fuzz {

// <tmp>/<name>_<pid>, created once per process.
inline std::filesystem::path scratch_dir(const std::string& name) {
  const std::filesystem::path p = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid()));
  std::filesystem::create_directories(p);
  return p;
}

inline void put(const std::filesystem::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

[[noreturn]] inline void finding(const char* target, const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s finding: %s: %s\n", target, what, detail.c_str());
  std::abort();
}

}  // namespace hw_fuzz
