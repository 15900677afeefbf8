// libFuzzer target for the SBML front end (libSBML's parsing and Heartwave's conversion).
//
// Any input must either convert or end in hw::Error (an InputError for the user); every
// other outcome — another exception type, a crash, a sanitizer report, a hang — is a
// finding. libSBML itself is not instrumented (Debian's build), so coverage guides the
// fuzzer through Heartwave's reader; memory errors inside libSBML still crash the target.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "model/frontend/sbml/sbml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view xml(reinterpret_cast<const char*>(data), size);
  try {
    hw::model::Model m = hw::model::parse_sbml(xml, "fuzz.sbml");
    (void)m;
  } catch (const hw::Error&) {
    // Rejected input is the expected outcome for most mutations.
  }
  return 0;
}
