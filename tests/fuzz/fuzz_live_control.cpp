// libFuzzer target: the live view's control messages (live/flat_json, live/controls), the
// only thing a page's socket reaches. Any input must either parse into a control whose
// values are finite and within the space's ranges, or be refused with a message; never a
// crash, a hang or undefined behaviour (the build adds ASan and UBSan). An accepted
// control's log line (control_json) must parse back to the same op.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "live/controls.hpp"
#include "live/flat_json.hpp"

namespace {

hw::live::ControlSpace space() {
  hw::live::ControlSpace s;
  s.extent = {30, 20, 10};
  s.cell = 0.5;
  s.parameters = {{"conductivity.scale", "σ ×", "×", 1, 0.1, 10},
                  {"time.dt", "dt", "ms", 0.02, 0.001, 0.05},
                  {"model[0].scale.GKr_b", "GKr_b ×", "×", 1, 0, 10}};
  s.variables = {"V", "Cai"};
  return s;
}

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const hw::live::ControlSpace s = space();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string why;
  const auto c = hw::live::parse_control(text, s, &why);
  if (!c) {
    check(!why.empty());
    return 0;
  }
  for (double x : {c->at[0], c->at[1], c->at[2], c->amplitude, c->radius, c->duration, c->value, c->position})
    check(std::isfinite(x));
  for (int d = 0; d < 3; ++d) check(c->at[std::size_t(d)] >= 0 && c->at[std::size_t(d)] <= s.extent[std::size_t(d)]);
  check(std::fabs(c->amplitude) <= s.amplitude_max);
  check(c->count >= 1 && c->count <= s.step_max);
  const auto back = hw::live::parse_control(hw::live::control_json(*c), s, &why);
  check(back && back->op == c->op);
  return 0;
}
