// libFuzzer target for the CellML front end.
//
// Any input must either parse or end in hw::Error (an InputError for the user); every
// other outcome — another exception type, a crash, a sanitizer report, a hang — is a
// finding. base_dir is empty, so imports are refused and the fuzzer never reads files.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "model/frontend/cellml/cellml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view xml(reinterpret_cast<const char*>(data), size);
  try {
    hw::model::Model m = hw::model::parse_cellml(xml, "fuzz.cellml");
    (void)m;
  } catch (const hw::Error&) {
    // Rejected input is the expected outcome for most mutations.
  }
  return 0;
}
