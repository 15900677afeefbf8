// The heartwave command line: a thin layer over the library. Exit codes: 0 success,
// 1 bad input (model file, values, I/O) or a failed run, 2 bad command line.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli_hints.hpp"
#include "common.hpp"
#include "version.hpp"
#include "core/error.hpp"

namespace hw::cli {
void add_model_commands(CLI::App& app, Action& action);
void add_cell_command(CLI::App& app, Action& action);
void add_sweep_command(CLI::App& app, Action& action);
void add_restitution_command(CLI::App& app, Action& action);
void add_run_command(CLI::App& app, Action& action);
void add_bench_command(CLI::App& app, Action& action);
void add_geometry_command(CLI::App& app, Action& action);
void add_mesh_command(CLI::App& app, Action& action);
}  // namespace hw::cli

int main(int argc, char** argv) {
  using namespace hw::cli;
  const std::string version = std::string(kVersion) + (*kGitCommit ? std::string(" (") + kGitCommit + ")" : "");
  CLI::App app{"Heartwave " + version +
               ": cardiac electrophysiology simulator (tissue, cell models, single cells, populations)"};
  app.set_version_flag("--version", "heartwave " + version, "the version (and git commit of the build) and exit");
  app.set_help_all_flag("--help-all", "help for every command");
  app.add_flag("-v,--verbose", g_verbose, "every warning of a model, not one line per kind (any command)");
  app.fallthrough();  // so `heartwave cell FILE --verbose` works as well as `heartwave --verbose cell FILE`
  Action action;
  add_model_commands(app, action);
  add_cell_command(app, action);
  add_sweep_command(app, action);
  add_restitution_command(app, action);
  add_run_command(app, action);
  add_bench_command(app, action);
  add_geometry_command(app, action);
  add_mesh_command(app, action);
  // After the commands: CLI11 gives a command its parent's footer when it is added, and
  // each command shows its own examples, not these.
  app.footer(
      "Examples:\n"
      "  heartwave run                           # default case: a 2D spiral wave, pictures in out/\n"
      "  heartwave run examples/scroll3d.toml --set time.t_end=200\n"
      "  heartwave cell                          # a paced built-in cell, trace.csv\n"
      "  heartwave cell luo_rudy_1991 --bcl 500 --beats 5 --json\n"
      "  heartwave model list\n"
      "  heartwave model inspect ../shared/models/cellml/tentusscher_panfilov_2006_epi.cellml\n"
      "  heartwave model convert ../shared/models/cellml/luo_rudy_1991.cellml -o lr91.hwm\n"
      "  heartwave sweep mfhn --grid b=0.5:1.5:5 -o biomarkers.csv\n"
      "  heartwave geometry inspect tests/data/geometry/ascii_3x2x2.nrrd\n"
      "  heartwave mesh inspect examples/meshes/ellipsoid_lv.pts --spacing 0.5\n"
      "Run `heartwave COMMAND --help` for each command's options. Docs: docs/cli.md");
  if (argc <= 1) {
    std::cout << app.help();
    return 0;
  }
  try {
    app.parse(argc, argv);
    if (!action) {
      std::cout << app.help();
      return 0;
    }
    return action();
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "heartwave: " << e.what() << "\n" << command_line_hint(app, argc, argv)
              << "(run with --help for usage)\n";
    return 2;
  } catch (const hw::InputError& e) {
    for (const auto& d : e.diagnostics()) std::cerr << d.str() << '\n';
    return 1;
  } catch (const hw::Error& e) {
    std::cerr << "heartwave: error: " << e.what() << '\n';
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "heartwave: internal error: " << e.what() << '\n';
    return 1;
  }
}
