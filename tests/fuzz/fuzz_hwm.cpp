// libFuzzer target for the native model language.
//
// Any input must either parse or end in hw::Error. When it parses, the model is printed
// back with write_hwm and re-parsed: a model the parser accepted must survive its own
// printer, so an exception there, or a re-parsed model with other symbols, is a finding
// (reported by abort so that libFuzzer keeps the input).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "model/frontend/hwm/hwm.hpp"

namespace {

[[noreturn]] void finding(const char* what, const std::string& detail, const std::string& text) {
  std::fprintf(stderr, "fuzz_hwm finding: %s: %s\n--- written model ---\n%s\n", what,
               detail.c_str(), text.c_str());
  std::abort();
}

template <class Symbols>
bool same_names(const Symbols& a, const Symbols& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  hw::model::Model first;
  try {
    first = hw::model::parse_hwm(text, "fuzz.hwm");
  } catch (const hw::Error&) {
    return 0;  // rejected input: the expected outcome for most mutations
  }

  std::string written;
  try {
    written = hw::model::write_hwm(first);
  } catch (const std::exception& e) {
    finding("write_hwm threw on a parsed model", e.what(), std::string(text));
  }
  try {
    hw::model::Model second = hw::model::parse_hwm(written, "fuzz_roundtrip.hwm");
    if (!same_names(first.states, second.states) ||
        !same_names(first.parameters, second.parameters) ||
        !same_names(first.algebraics, second.algebraics))
      finding("round trip changed the symbols", "", written);
  } catch (const std::exception& e) {
    finding("re-parsing write_hwm output failed", e.what(), written);
  }
  return 0;
}
