// See common.hpp.
#include "common.hpp"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "cell/population.hpp"


namespace hw::cli {

const CLI::Validator kPositive(
    [](std::string& s) -> std::string {
      try {
        std::size_t used = 0;
        const double v = std::stod(s, &used);
        if (used == s.size() && v > 0 && std::isfinite(v)) return "";
      } catch (const std::exception&) {
      }
      return "must be a positive number, got '" + s + "'";
    },
    "POSITIVE");
const CLI::Validator kNonNegative(
    [](std::string& s) -> std::string {
      try {
        std::size_t used = 0;
        const double v = std::stod(s, &used);
        if (used == s.size() && v >= 0 && std::isfinite(v)) return "";
      } catch (const std::exception&) {
      }
      return "must be a number >= 0, got '" + s + "'";
    },
    "NONNEGATIVE");

// NAME=VALUE with a number: the shape of --param, checked while the command line is read
// (a malformed value is a usage error, exit 2); whether NAME exists is the model's matter.
const CLI::Validator kAssignment(
    [](std::string& s) -> std::string {
      const auto eq = s.find('=');
      if (eq == std::string::npos || eq == 0) return "expected NAME=VALUE, got '" + s + "'";
      const std::string num = s.substr(eq + 1);
      double v = 0;
      auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
      if (ec != std::errc() || p != num.data() + num.size() || !std::isfinite(v))
        return "'" + num + "' in '" + s + "' is not a finite number";
      return "";
    },
    "NAME=VALUE");

// NAME=LO:HI:N (--grid) and NAME=LO:HI (--random, --lhs): the shape the population reader
// takes (cell::parse_range), checked while the command line is read.
static CLI::Validator range_validator(bool with_count) {
  return CLI::Validator(
      [with_count](std::string& s) -> std::string {
        try {
          cell::parse_range(s, with_count);
          return "";
        } catch (const InputError& e) {
          return e.what();
        }
      },
      with_count ? "NAME=LO:HI:N" : "NAME=LO:HI");
}
const CLI::Validator kRangeWithCount = range_validator(true);
const CLI::Validator kRange = range_validator(false);

std::string default_model() {
  for (const auto& n : model::builtin_model_names())
    if (n == "tentusscher_2006_epi") return n;
  return "mfhn";
}

void RoleFlags::add_to(CLI::App& app) {
  const char* g = "Roles (override what metadata and name rules found)";
  app.add_option("--voltage,--membrane-potential", voltage, "state that is the membrane potential")->group(g);
  app.add_option("--stimulus", stimulus, "algebraic that is the stimulus current")->group(g);
  app.add_option("--stimulus-amplitude-param", stim_amp_param, "parameter: stimulus amplitude")->group(g);
  app.add_option("--stimulus-duration-param", stim_dur_param, "parameter: stimulus duration")->group(g);
  app.add_option("--stimulus-period-param", stim_period_param, "parameter: stimulus period")->group(g);
  app.add_option("--stimulus-start-param", stim_start_param, "parameter: stimulus start")->group(g);
  app.add_option("--calcium", calcium, "state that is cytosolic calcium")->group(g);
  app.add_option("--capacitance", capacitance, "parameter that is the membrane capacitance")->group(g);
}

model::RoleOverrides RoleFlags::overrides() const {
  model::RoleOverrides o;
  o.voltage = voltage;
  o.stimulus_current = stimulus;
  o.stimulus_amplitude = stim_amp_param;
  o.stimulus_duration = stim_dur_param;
  o.stimulus_period = stim_period_param;
  o.stimulus_start = stim_start_param;
  o.calcium = calcium;
  o.capacitance = capacitance;
  return o;
}

void SimFlags::add_to(CLI::App& app, bool allow_cvode) {
  app.add_option("FILE", file, "model: a .cellml/.sbml/.xml (CellML or SBML)/.hwm file or a built-in model's name");
  std::vector<std::string> methods{"auto", "fe", "rk2", "rk4", "rl1", "rl2", "sbe", "grl1", "grl2"};
  if (allow_cvode) methods.push_back("cvode");
  app.add_option("--integrator,-i", integrator,
                 "integration method; auto: the cheapest of rl2/grl2 (with sub-steps) that matches CVODE "
                 "on a probe beat (docs/single-cell.md)")
      ->check(CLI::IsMember(methods))
      ->capture_default_str();
  app.add_option("--dt", dt, "time step in ms (CVODE: sampling interval for biomarkers)")
      ->check(kPositive)
      ->capture_default_str();
  app.add_option("--bcl", bcl, "basic cycle length in ms")->check(kPositive)->capture_default_str();
  app.add_option("--beats", beats, "number of paced beats")->check(CLI::Range(1, 1000000))->capture_default_str();
  app.add_option("--stim-amplitude", stim_amplitude,
                 "stimulus strength (magnitude, model units; default: the model's own)");
  app.add_option("--stim-duration", stim_duration, "stimulus duration in ms (default: the model's own)")
      ->check(kPositive);
  app.add_option("--stim-start", stim_start, "first stimulus at this time, ms")
      ->check(kNonNegative)
      ->capture_default_str();
  app.add_option("--param,-p", params, "set a parameter: NAME=VALUE (repeatable)")->check(kAssignment);
  app.add_option("--precision", precision, "arithmetic of fixed-step integrators")
      ->check(CLI::IsMember({"float", "double"}))
      ->capture_default_str();
  add_cell_maths_option(&app, cell_maths, "the cell's kernel");
  app.add_option("--kernel", kernel, "backend: auto (built-in or compiled, else interpreter), interpreter, compiled")
      ->check(CLI::IsMember({"auto", "interpreter", "compiled"}))
      ->capture_default_str();
  if (allow_cvode) {
    app.add_option("--rtol", rtol, "CVODE relative tolerance")->check(kPositive)->capture_default_str();
    app.add_option("--atol", atol, "CVODE absolute tolerance")->check(kPositive)->capture_default_str();
  }
  app.add_flag("--model-stimulus", model_stimulus,
               "keep the model's own stimulus protocol (--bcl/--beats then only delimit beats)");
  app.add_option("--initial-state", initial_state,
                 "start from the states of this state file (written by --save-state; docs/single-cell.md)");
  roles.add_to(app);
}

void print_state_warnings(const run::PreparedCell& p, const std::string& command) {
  for (const auto& w : p.state_warnings) std::cerr << command << ": warning: " << w << '\n';
}

namespace {

std::pair<std::string, double> parse_assignment(const std::string& a) {
  const auto eq = a.find('=');
  double v = 0;
  if (eq == std::string::npos || eq == 0)
    throw InputError(SourceLoc{}, fmt::format("--param '{}': expected NAME=VALUE", a));
  const std::string num = a.substr(eq + 1);
  auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (ec != std::errc() || p != num.data() + num.size() || !std::isfinite(v))
    throw InputError(SourceLoc{}, fmt::format("--param '{}': '{}' is not a number", a, num));
  return {a.substr(0, eq), v};
}

}  // namespace

run::CellRunOptions run_options(const SimFlags& f) {
  run::CellRunOptions o;
  o.model = f.file;
  o.integrator = f.integrator;
  o.dt_ms = f.dt;
  o.bcl_ms = f.bcl;
  o.beats = f.beats;
  o.stim_amplitude = f.stim_amplitude;
  o.stim_duration_ms = f.stim_duration;
  o.stim_start_ms = f.stim_start;
  for (const auto& a : f.params) o.params.push_back(parse_assignment(a));
  o.single_precision = f.precision == "float";
  o.cell_maths = cell_maths_of(f.cell_maths);
  o.kernel = f.kernel;
  o.rtol = f.rtol;
  o.atol = f.atol;
  o.model_stimulus = f.model_stimulus;
  o.roles = f.roles.overrides();
  o.initial_state = f.initial_state;
  return o;
}

run::PreparedCell prepare(const SimFlags& f, bool cpu_kernel) {
  return run::prepare_cell(run_options(f), cpu_kernel);
}

CLI::Option* add_cell_maths_option(CLI::App* cmd, std::string& value, const std::string& what) {
  return cmd
      ->add_option("--cell-maths", value,
                   "what " + what +
                       " computes in place of the model's own maths (exact), each within CI-checked bounds "
                       "(APD90 0.1 ms, RRMS of V 0.1 %; docs/cell-maths.md): tables (functions of V from lookup "
                       "tables; `heartwave model inspect FILE --tables` lists them), fast (float only: the GPU's fast "
                       "intrinsics __expf, __logf, __powf and __fdividef; on the CPU the same approximations, not "
                       "faster; `model inspect FILE --fast` counts them) or tables+fast")
      ->check(CLI::IsMember({"exact", "tables", "fast", "tables+fast"}))
      ->capture_default_str();
}

model::CellMaths cell_maths_of(const std::string& value) {
  if (auto m = model::parse_cell_maths(value)) return *m;
  throw InputError(SourceLoc{}, "--cell-maths " + value + ": not one of " + model::kCellMathsChoices);
}

std::string format_ms(double t, double dt) {
  int decimals = 0;
  while (decimals < 9 && std::fabs(dt * std::pow(10.0, decimals) - std::round(dt * std::pow(10.0, decimals))) >
                             1e-9 * std::pow(10.0, decimals))
    ++decimals;
  std::string s = fmt::format("{:.{}f}", t, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();  // 0.5, not 0.50 (dt 0.05)
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

bool g_verbose = false;

void print_notes(const std::vector<Diagnostic>& notes) {
  // One line per kind: fifty unit warnings of a published model bury the results, and a
  // count says as much as the list.
  std::vector<const Diagnostic*> first;
  std::map<std::string, std::size_t> count;  // by code; uncoded warnings each their own
  for (const auto& d : notes) {
    if (d.severity == Severity::note) continue;
    if (g_verbose || d.code.empty() || count[d.code]++ == 0) first.push_back(&d);
  }
  for (const Diagnostic* d : first) {
    std::cerr << d->str() << '\n';
    const std::size_t more = d->code.empty() || g_verbose ? 0 : count[d->code] - 1;
    if (more > 0)
      std::cerr << fmt::format("  ... and {} more warning{} of this kind [{}] (--verbose, or `heartwave model "
                               "inspect FILE`, lists them all)\n",
                               more, more > 1 ? "s" : "", d->code);
  }
}

void check_writable(const std::string& path, const std::string& option) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const SourceLoc at{path, 0, 0};
  if (fs::is_directory(path, ec))
    throw InputError(at, fmt::format("{}: {} is a folder; give a file name in it (for example {}/out.csv)", option,
                                     path, path));
  const fs::path parent = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  if (!fs::is_directory(parent, ec))
    throw InputError(at, fmt::format("{}: the folder {} does not exist; create it first", option, parent.string()));
  if (::access(parent.c_str(), W_OK) != 0 || (fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0))
    throw InputError(at, fmt::format("{}: cannot be written here (permissions)", option));
}

}  // namespace hw::cli
