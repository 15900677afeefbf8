// See state_file.hpp.
#include "run/state_file.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/atomic_file.hpp"

namespace hw::run {

namespace {

constexpr const char* kFormat = "heartwave-cell-state";

// A TOML key: bare when it can be, else quoted.
std::string key(const std::string& k) {
  bool bare = !k.empty();
  for (char c : k) bare = bare && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
  if (bare) return k;
  std::string q = "\"";
  for (char c : k) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

// A TOML float in shortest round-trip form (nan and inf as TOML spells them).
std::string num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string quoted(const std::string& s) { return key(s).front() == '"' ? key(s) : "\"" + s + "\""; }

}  // namespace

std::string format_state_file(const cell::SavedState& s) {
  std::string o;
  o += "# A paced cell's state, written by heartwave (docs/single-cell.md, \"Steady states\").\n";
  o += "# Start from it: heartwave cell/sweep/restitution --initial-state FILE, heartwave.pace(initial_state=FILE),\n";
  o += "# or a case's [[model]] initial_state = \"FILE\". States are in the model's own units.\n";
  o += fmt::format("format = \"{}\"\nversion = 1\nmodel = {}\nmodel_sha256 = \"{}\"\n\n", kFormat, quoted(s.model),
                   s.model_sha256);
  o += "[pacing]\n";
  o += fmt::format("bcl_ms = {}\nbeats = {}\nstim_duration_ms = {}\nstim_amplitude = {}\n", num(s.bcl_ms), s.beats,
                   num(s.stim_duration_ms), num(s.stim_amplitude));
  o += fmt::format("tolerance = {}  # --until-steady; 0 when not asked\n", num(s.tolerance));
  o += fmt::format("steady_beat = {}  # the first beat whose state change was below tolerance; 0 when none\n",
                   s.steady_beat);
  o += fmt::format("last_change = {}  # max over states of |x_n - x_(n-1)| / max(|x_n|, |x_(n-1)|), last beat\n\n",
                   num(s.last_change));
  o += "[parameters]  # the parameters the run set (absolute values); the others at the model's defaults\n";
  for (const auto& [k, v] : s.params) o += fmt::format("{} = {}\n", key(k), num(v));
  o += "\n[states]\n";
  for (const auto& [k, v] : s.states) o += fmt::format("{} = {}\n", key(k), num(v));
  return o;
}

void write_state_file(const std::string& path, const cell::SavedState& s) {
  io::write_file_atomic(path, format_state_file(s));
}

cell::SavedState read_state_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(SourceLoc{path, 0, 0}, "cannot read the state file (heartwave cell ... --save-state FILE writes one)");
  std::stringstream text;
  text << in.rdbuf();
  toml::table doc;
  try {
    doc = toml::parse(text.str(), path);
  } catch (const toml::parse_error& e) {
    throw InputError(SourceLoc{path, int(e.source().begin.line), int(e.source().begin.column)},
                     fmt::format("not a state file: {}", e.description()));
  }
  auto at = [&](const toml::node* n) {
    return n ? SourceLoc{path, int(n->source().begin.line), int(n->source().begin.column)} : SourceLoc{path, 0, 0};
  };
  if (doc["format"].value<std::string>() != std::string(kFormat))
    throw InputError(at(doc.get("format")), fmt::format("not a state file: format = \"{}\" is missing", kFormat));
  if (auto v = doc["version"].value<int64_t>(); v && *v > 1)
    throw InputError(at(doc.get("version")), fmt::format("state file version {} is newer than this heartwave reads (1)", *v));
  cell::SavedState s;
  s.source = path;
  s.model = doc["model"].value_or(std::string());
  if (s.model.empty()) throw InputError(at(doc.get("model")), "the state file names no model (model = \"NAME\")");
  s.model_sha256 = doc["model_sha256"].value_or(std::string());
  auto number = [&](const toml::node* n, const std::string& what) {
    if (auto v = n ? n->value<double>() : std::nullopt) return *v;
    throw InputError(at(n), fmt::format("{} must be a number", what));
  };
  if (const toml::table* p = doc["pacing"].as_table()) {
    auto opt = [&](const char* k, double dflt) { return p->get(k) ? number(p->get(k), std::string("pacing.") + k) : dflt; };
    s.bcl_ms = opt("bcl_ms", 0);
    s.beats = int(opt("beats", 0));
    s.stim_duration_ms = opt("stim_duration_ms", 0);
    s.stim_amplitude = opt("stim_amplitude", 0);
    s.tolerance = opt("tolerance", 0);
    s.steady_beat = int(opt("steady_beat", 0));
    s.last_change = opt("last_change", 0);
  }
  // A table's entries in the file's order (toml++ keeps them sorted by key): the states
  // then come back in the model's order, as written.
  auto entries = [&](const toml::table& t, const std::string& prefix) {
    std::vector<std::pair<const toml::key*, const toml::node*>> kv;
    for (auto&& [k, v] : t) kv.emplace_back(&k, &v);
    std::stable_sort(kv.begin(), kv.end(), [](const auto& a, const auto& b) {
      return a.first->source().begin.line < b.first->source().begin.line;
    });
    std::vector<std::pair<std::string, double>> out;
    for (const auto& [k, v] : kv) out.emplace_back(std::string(k->str()), number(v, prefix + std::string(k->str())));
    return out;
  };
  if (const toml::table* p = doc["parameters"].as_table()) s.params = entries(*p, "parameters.");
  const toml::table* st = doc["states"].as_table();
  if (!st || st->empty()) throw InputError(at(doc.get("states")), "the state file has no [states] table");
  s.states = entries(*st, "states.");
  return s;
}

}  // namespace hw::run
