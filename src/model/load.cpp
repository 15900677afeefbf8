// See load.hpp.
#include "model/load.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/suggest.hpp"
#include "model/frontend/cellml/cellml.hpp"
#include "model/frontend/hwm/hwm.hpp"
#include "model/frontend/sbml/sbml.hpp"
#include "model/jit/builtin_registry.hpp"
#include "model/passes/check_units.hpp"

namespace hw::model {

namespace fs = std::filesystem;

namespace {

// " (did you mean …?)" for a mistyped model: the built-in names, and the model files
// (.cellml, .xml, .hwm) in the folder the name points into.
std::string model_hint(const std::string& what) {
  std::vector<std::string> candidates = builtin_model_names();
  const fs::path p(what);
  std::error_code ec;
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const auto ext = e.path().extension();
    if (ext == ".cellml" || ext == ".xml" || ext == ".sbml" || ext == ".hwm")
      candidates.push_back(p.has_parent_path() ? (dir / e.path().filename()).string() : e.path().filename().string());
  }
  // "luo_rudy_1991.cellml" for the built-in luo_rudy_1991: the name without its extension.
  const std::string stem = p.stem().string();
  if (p.has_extension() && std::find(candidates.begin(), candidates.end(), stem) != candidates.end())
    return " (did you mean the built-in '" + stem + "'?)";
  return hw::did_you_mean(what, candidates, 3);
}

// The repository's models/ folder, for built-ins when the compiled registry is not linked.
fs::path models_dir() { return fs::path(HW_SOURCE_DIR) / "models"; }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

ModelFormat model_format_of(const std::string& path) {
  const std::string ext = lower(fs::path(path).extension().string());
  if (ext == ".hwm") return ModelFormat::hwm;
  if (ext != ".cellml" && ext != ".xml" && ext != ".sbml")
    throw InputError(SourceLoc{path, 0, 0},
                     fmt::format("unknown model file extension '{}': use .cellml, .sbml, .xml or .hwm",
                                 ext));
  // The root element decides between CellML (<model>) and SBML (<sbml>): both are often
  // called .xml, and a file's extension may lie. Unreadable or odd files go to the
  // extension's reader, which reports the problem.
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  const std::string root = xml_root_name(head);
  if (root == "sbml") return ModelFormat::sbml;
  if (root == "model") return ModelFormat::cellml;
  return ext == ".sbml" ? ModelFormat::sbml : ModelFormat::cellml;
}

std::string xml_root_name(std::string_view text) {
  std::size_t i = 0;
  while (true) {
    i = text.find('<', i);
    if (i == std::string_view::npos || i + 1 >= text.size()) return "";
    const char c = text[i + 1];
    if (c == '?') {  // declaration or processing instruction
      i = text.find("?>", i);
    } else if (text.compare(i, 4, "<!--") == 0) {
      i = text.find("-->", i);
    } else if (c == '!') {  // DOCTYPE
      i = text.find('>', i);
    } else {
      std::size_t e = i + 1;
      while (e < text.size() && !std::isspace(static_cast<unsigned char>(text[e])) && text[e] != '>' &&
             text[e] != '/')
        ++e;
      std::string_view name = text.substr(i + 1, e - i - 1);
      if (auto colon = name.find(':'); colon != std::string_view::npos) name = name.substr(colon + 1);
      return std::string(name);
    }
    if (i == std::string_view::npos) return "";
    ++i;
  }
}

Model read_model_file(const std::string& path) {
  switch (model_format_of(path)) {
    case ModelFormat::hwm: return load_hwm(path);
    case ModelFormat::sbml: return load_sbml(path);
    case ModelFormat::cellml: break;
  }
  return load_cellml(path);
}

namespace {

Model read_model(const std::string& what, std::string* builtin) {
  std::error_code ec;
  if (fs::is_regular_file(what, ec)) return read_model_file(what);
  if (fs::is_directory(what, ec))
    throw InputError(SourceLoc{what, 0, 0},
                     "is a folder, not a model file: give a .cellml, .sbml, .xml or .hwm file in it");
  if (const BuiltinModel* b = find_builtin(what)) {
    *builtin = b->name;
    return parse_hwm(b->hwm_source, "builtin:" + b->name + ".hwm");
  }
  const fs::path file = models_dir() / (what + ".hwm");
  if (what.find('/') == std::string::npos && fs::is_regular_file(file, ec)) {
    *builtin = what;
    return load_hwm(file.string());
  }
  std::string names;
  for (const auto& n : builtin_model_names()) names += "\n  " + n;
  throw InputError(SourceLoc{what, 0, 0},
                   fmt::format("no such file, and not a built-in model{}. Built-in models:{}", model_hint(what),
                               names.empty() ? std::string(" (none)") : names));
}

}  // namespace

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> names;
  for (const auto& b : builtin_models()) names.push_back(b.name);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(models_dir(), ec))
    if (e.path().extension() == ".hwm") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

LoadedModel load_model(const std::string& what, const LoadOptions& opt) {
  LoadedModel out;
  out.source = read_model(what, &out.builtin);
  detect_roles(out.source, opt.roles);
  DiagnosticSink sink;
  {
    DiagnosticSink units;
    check_units(out.source, units);
    // Unit problems are reported, not fatal: many published models are inconsistent.
    for (const auto& d : units.all()) sink.add(d);
  }
  out.analysed = out.source;
  if (!opt.keep_model_stimulus) {
    out.stimulus = prepare_pacing(out.analysed);
    if (!out.stimulus.warning.empty()) {
      Diagnostic d{Severity::warning, out.stimulus.stimulus_loc, out.stimulus.warning, {}};
      d.code = "pacing.stimulus";
      sink.add(d);
    }
  }
  run_pipeline(out.analysed, opt.pipeline, sink);
  sink.throw_if_errors();
  out.notes = sink.all();
  return out;
}

}  // namespace hw::model
