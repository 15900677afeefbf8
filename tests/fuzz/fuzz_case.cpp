// libFuzzer target for case files: the TOML reader and its validation (run/case_file.hpp),
// what every `heartwave run CASE` and `--set` goes through first.
//
// An input is a case file; after a line "@@@", each further line is one `--set KEY=VALUE`
// override. The case is read as if it were <tmp>/case.toml, so relative paths in it name
// files that do not exist (a located error). A case that reads is described as `run
// --check` prints it. Every problem must be an hw::Error; anything else (a sanitizer
// report, another exception, a timeout, more than 2 GiB) is a finding.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "run/case_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string file =
      (std::filesystem::temp_directory_path() / ("hw_fuzz_case_" + std::to_string(getpid())) / "case.toml").string();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string_view toml = text;
  std::vector<std::string> overrides;
  if (const std::size_t cut = text.find("\n@@@\n"); cut != std::string_view::npos) {
    toml = text.substr(0, cut + 1);
    std::string_view rest = text.substr(cut + 5);
    while (!rest.empty()) {
      const std::size_t eol = rest.find('\n');
      overrides.emplace_back(rest.substr(0, eol));
      rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 1);
    }
  }
  try {
    const hw::tissue::TissueCase c = hw::io::parse_case(toml, file, overrides);
    (void)hw::io::describe_case(c);
  } catch (const hw::Error&) {
  }
  return 0;
}
