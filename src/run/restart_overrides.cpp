// See restart_overrides.hpp.
#include "run/restart_overrides.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::run {

namespace {

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

}  // namespace

std::string override_key(const std::string& set) { return trim(set.substr(0, set.find('='))); }

std::string override_value(const std::string& set) {
  const auto eq = set.find('=');
  return eq == std::string::npos ? "" : trim(set.substr(eq + 1));
}

bool changes_physics(const std::string& key) { return key != "time.t_end" && key.rfind("output.", 0) != 0; }

std::vector<std::string> merge_restart_overrides(const std::vector<std::string>& from_checkpoint,
                                                 const std::vector<std::string>& given,
                                                 const std::string& checkpoint) {
  std::vector<std::string> out = from_checkpoint;
  for (const auto& g : given) {
    const std::string key = override_key(g);
    auto same = out.end();
    for (auto it = out.begin(); it != out.end(); ++it)
      if (override_key(*it) == key) same = it;  // the last one counts, as when parsed
    if (changes_physics(key)) {
      if (same == out.end())
        throw InputError(SourceLoc{checkpoint, 0, 0},
                         fmt::format("--set {}: the run this checkpoint continues did not set {} (it ran with the "
                                     "case file's value), so it cannot continue with {} = {}; leave this --set out "
                                     "to continue it, or start a new run without --restart",
                                     g, key, key, override_value(g)));
      if (override_value(*same) != override_value(g))
        throw InputError(SourceLoc{checkpoint, 0, 0},
                         fmt::format("--set {}: the run this checkpoint continues had {} = {}, this command {} = {}; "
                                     "a restart continues the same physics: leave this --set out (the checkpoint's "
                                     "overrides are applied), or start a new run without --restart",
                                     g, key, override_value(*same), key, override_value(g)));
      continue;
    }
    if (same != out.end())
      *same = g;
    else
      out.push_back(g);
  }
  return out;
}

}  // namespace hw::run
