// Helpers shared by the verification tests (test_vs_cvode.cpp, test_vs_myokit.cpp).
//
// Why through the CLI: these tests check the whole chain a user runs (CellML import,
// passes, generated code, integrator, pacing, biomarkers, CSV/JSON output), so they drive
// the built `heartwave` binary as a subprocess exactly as documented in the CLI contract,
// and parse its CSV trace and JSON biomarkers. tools/make_verification_doc.py computes the
// same metrics the same way for docs/verification.md.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace hw::verify {

namespace fs = std::filesystem;

inline constexpr double kBclMs = 1000.0;
inline constexpr int kBeats = 3;
inline constexpr double kGridMs = 0.5;  // RRMS is taken on t = 0, 0.5, ..., < 3000 ms

struct Trace {
  std::vector<double> t, v;
};

struct CliRun {
  int exit_code = -1;
  std::string stdout_text;
  std::string stderr_text;
  std::string command;
  Trace trace;
  std::vector<double> apd90;  // per beat, NaN where the JSON has null / NaN
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs a shell command; returns exit status and stdout (stderr goes to a file named in
// the command by the caller when wanted).
inline int run_command(const std::string& cmd, std::string& out) {
  out.clear();
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// Reads a CSV with a header row; '#' lines are comments. Columns `t` and `V` are required.
inline std::optional<Trace> read_trace(const fs::path& path, std::string* why = nullptr) {
  std::ifstream in(path);
  if (!in) {
    if (why) *why = "cannot open " + path.string();
    return std::nullopt;
  }
  std::string line;
  int it = -1, iv = -1;
  Trace tr;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) {
      while (!cell.empty() && (cell.back() == '\r' || cell.back() == ' ')) cell.pop_back();
      while (!cell.empty() && cell.front() == ' ') cell.erase(cell.begin());
      cells.push_back(cell);
    }
    if (it < 0) {
      for (int k = 0; k < static_cast<int>(cells.size()); ++k) {
        if (cells[k] == "t" && it < 0) it = k;
        if (cells[k] == "V" && iv < 0) iv = k;  // a state named V repeats it
      }
      if (it < 0 || iv < 0) {
        if (why) *why = "no t/V columns in header of " + path.string() + ": " + line;
        return std::nullopt;
      }
      continue;
    }
    if (static_cast<int>(cells.size()) <= std::max(it, iv)) continue;
    tr.t.push_back(std::strtod(cells[it].c_str(), nullptr));
    tr.v.push_back(std::strtod(cells[iv].c_str(), nullptr));
  }
  if (tr.t.size() < 2) {
    if (why) *why = "fewer than two rows in " + path.string();
    return std::nullopt;
  }
  return tr;
}

// Every `"<name>": number` in the order it appears (apd90: one per beat in the CLI's JSON;
// the goldens' apd90_ms is one array). null / NaN give NaN.
inline std::vector<double> json_numbers(const std::string& json, const std::string& name = "apd90") {
  std::vector<double> out;
  const std::string key = "\"" + name + "\"";
  if (name == "apd90_ms") {  // "apd90_ms": [a, b, c]
    size_t k = json.find(key);
    if (k == std::string::npos) return out;
    k = json.find('[', k);
    const size_t end = json.find(']', k);
    if (k == std::string::npos || end == std::string::npos) return out;
    std::stringstream ss(json.substr(k + 1, end - k - 1));
    std::string item;
    while (std::getline(ss, item, ',')) {
      char* e = nullptr;
      const double v = std::strtod(item.c_str(), &e);
      out.push_back(e == item.c_str() ? std::numeric_limits<double>::quiet_NaN() : v);
    }
    return out;
  }
  for (size_t pos = json.find(key); pos != std::string::npos; pos = json.find(key, pos + 1)) {
    size_t k = json.find(':', pos + key.size());
    if (k == std::string::npos) break;
    ++k;
    while (k < json.size() && std::isspace(static_cast<unsigned char>(json[k]))) ++k;
    char* end = nullptr;
    const double v = std::strtod(json.c_str() + k, &end);
    out.push_back(end == json.c_str() + k ? std::numeric_limits<double>::quiet_NaN() : v);
  }
  return out;
}

// Linear interpolation of a trace at time x (trace times ascending).
inline double interp(const Trace& tr, double x) {
  const auto it = std::lower_bound(tr.t.begin(), tr.t.end(), x);
  if (it == tr.t.begin()) return tr.v.front();
  if (it == tr.t.end()) return tr.v.back();
  const size_t i = static_cast<size_t>(it - tr.t.begin());
  const double t0 = tr.t[i - 1], t1 = tr.t[i];
  if (t1 == t0) return tr.v[i];
  return tr.v[i - 1] + (tr.v[i] - tr.v[i - 1]) * (x - t0) / (t1 - t0);
}

// Seed 000 Eq. 2.1: RRMS = sqrt(sum (V - Vref)^2 / sum Vref^2), on the common grid
// t = 0, 0.5, ..., < beats*BCL (both traces linearly interpolated there; our traces at
// dt 0.01 and the Myokit goldens hold these points exactly).
inline double rrms(const Trace& v, const Trace& ref) {
  double num = 0, den = 0;
  const int n = static_cast<int>(std::lround(kBeats * kBclMs / kGridMs));
  for (int i = 0; i < n; ++i) {
    const double x = i * kGridMs;
    const double a = interp(v, x), b = interp(ref, x);
    num += (a - b) * (a - b);
    den += b * b;
  }
  return std::sqrt(num / den);
}

// "a/b/c" with NaN as "nan", for the HW_VERIFY lines the doc script parses.
inline std::string join_ms(const std::vector<double>& xs) {
  std::string s;
  char buf[32];
  for (size_t i = 0; i < xs.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.3f", xs[i]);
    s += (i ? "/" : "") + std::string(std::isnan(xs[i]) ? "nan" : buf);
  }
  return s;
}

inline fs::path shared_models_dir() { return fs::path(HW_SHARED_DIR) / "models" / "cellml"; }
inline fs::path golden_dir() { return fs::path(HW_TEST_DATA_DIR) / "golden" / "traces"; }

// The golden's JSON text ("" when the model has no golden).
inline std::string golden_json(const std::string& model) {
  std::ifstream f(golden_dir() / (model + ".json"));
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A model whose own stimulus amplitude is 0 (Noble 1962) is not paced: it oscillates on
// its own, so "beats" of BCL 1000 ms hold any number of upstrokes, and per-beat APD90 is
// not defined (a window can see its largest upstroke after a repolarisation). Such models
// are checked on RRMS only.
inline bool unpaced(const std::string& model) {
  const auto v = json_numbers(golden_json(model), "stimulus_amplitude");
  return !v.empty() && v[0] == 0.0;
}

// Names (without .cellml) of every model in the shared CellML directory, sorted.
inline std::vector<std::string> shared_model_names() {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::is_directory(shared_models_dir(), ec)) return names;
  for (const auto& e : fs::directory_iterator(shared_models_dir(), ec))
    if (e.path().extension() == ".cellml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The stiff test set (tests/data/stiff) and every shared CellML model, sorted: what the
// stiff-set and cell-maths tests run.
inline std::vector<std::string> stiff_set_files() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(HW_TEST_DATA_DIR) / "data" / "stiff", ec))
    if (e.path().extension() == ".cellml") files.push_back(e.path().string());
  for (const auto& name : shared_model_names()) files.push_back((shared_models_dir() / (name + ".cellml")).string());
  std::sort(files.begin(), files.end());
  return files;
}

// A parameterised test's name from a model file: its stem, every other character '_'.
inline std::string model_test_name(const std::string& file) {
  std::string n = fs::path(file).stem().string();
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

// Flags a model needs beyond the common ones. FitzHugh-Nagumo's pulse is an algebraic
// named just `I` (too generic a name for a role rule); tools/myokit_golden.py finds the
// same variable as the only time-dependent piecewise. Noble 1962's own stimulus amplitude
// is 0 (it self-oscillates), which the CLI will not take as a default, so it is given.
inline std::string model_flags(const std::string& model) {
  if (model == "fitzhugh_nagumo_1961") return " --stimulus I";
  if (model == "noble_1962") return " --stim-amplitude 0";
  return "";
}

// `heartwave cell FILE --bcl 1000 --beats 3 --json --output CSV --output-interval 0.5`
// with the integrator's flags (and `extra`); cached per (file, integrator, dt, extra) for
// the life of the test process. The trace rows fall on the RRMS grid; APD90 comes from the
// JSON, which the CLI computes from every step. The CLI's stderr is kept in `stderr_text`.
inline const CliRun& run_cell_file(const fs::path& file, const std::string& integrator, double dt_ms = 0.01,
                                   const std::string& extra = "") {
  static std::map<std::string, CliRun> cache;
  const std::string model = file.stem().string();
  const std::string key = file.string() + "/" + integrator + "/" + std::to_string(dt_ms) + "/" + extra;
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  CliRun r;
  // Per process: ctest runs tests in parallel processes that may run the same model.
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("hw_verify_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path csv = dir / (model + "_" + integrator + ".csv");
  const fs::path err = dir / (model + "_" + integrator + ".stderr");
  char dt[32];
  std::snprintf(dt, sizeof dt, "%g", dt_ms);
  std::string flags = " --integrator " + integrator;
  flags += integrator == "cvode" ? std::string(" --rtol 1e-8 --atol 1e-10 --dt 0.01") : std::string(" --dt ") + dt;
  r.command = shell_quote(HW_CLI_PATH) + " cell " + shell_quote(file.string()) + flags + model_flags(model) + extra +
              " --bcl 1000 --beats 3 --json --output-interval 0.5 --output " + shell_quote(csv.string());
  r.exit_code = run_command(r.command + " 2>" + shell_quote(err.string()), r.stdout_text);
  {
    std::ifstream e(err);
    std::stringstream ss;
    ss << e.rdbuf();
    r.stderr_text = ss.str();
  }
  if (r.exit_code != 0) {
    r.stdout_text += "\n[stderr] " + r.stderr_text;
  } else {
    std::string why;
    if (auto tr = read_trace(csv, &why)) r.trace = std::move(*tr);
    else r.stdout_text += "\n[csv] " + why;
    r.apd90 = json_numbers(r.stdout_text);
  }
  // Everything needed is in memory now; leave no files behind.
  std::error_code ec;
  fs::remove(csv, ec);
  fs::remove(err, ec);
  fs::remove(dir, ec);  // only succeeds once empty
  return cache.emplace(key, std::move(r)).first->second;
}

// A shared model by name, at dt 0.01 ms.
inline const CliRun& run_cell(const std::string& model, const std::string& integrator) {
  return run_cell_file(shared_models_dir() / (model + ".cellml"), integrator);
}

}  // namespace hw::verify
