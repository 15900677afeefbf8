// The heartwave command line: a thin layer over the library. Exit codes: 0 success,
// 1 bad input (model file, values, I/O) or a failed run, 2 bad command line.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli_hints.hpp"
#include "common.hpp"
#include "version.hpp"
#include "comm/world.hpp"
#include "core/error.hpp"
#include "model/jit/jit.hpp"
#include "ranks.hpp"

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

namespace {

// Where an error goes: stderr; on a rank other than 0 of a split run, the stderr saved before
// that rank's output was silenced (see main).
int g_error_fd = 2;

void report(const std::string& text) {
  if (g_error_fd != 2) {
    // The same error on every rank (bad input, a grid that does not split) is rank 0's to
    // print: it ends the run before this rank's pause is over. An error of this rank alone
    // is printed after it.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const std::string line = fmt::format("heartwave (rank {} of {}): {}", hw::comm::world().rank(),
                                         hw::comm::world().size(), text);
    if (::write(g_error_fd, line.data(), line.size()) < 0) return;
    return;
  }
  std::cerr << text << std::flush;
}

int run_cli(int argc, char** argv);

}  // namespace

// A split run (docs/parallel.md): every rank runs the same command; rank 0 alone prints,
// and a rank that fails ends them all (MPI_Abort) instead of leaving them waiting.
int main(int argc, char** argv) {
  using hw::cli::g_agreed_exit;
  for (int i = 0; i < argc; ++i) hw::cli::g_argv.emplace_back(argv[i]);
  try {
    hw::comm::start_world(argc, argv);
  } catch (const hw::Error& e) {
    std::cerr << "heartwave: error: " << e.what() << '\n';
    return 1;
  }
  hw::comm::Communicator& world = hw::comm::world();
  if (world.size() > 1 && world.rank() != 0) {
    std::fflush(nullptr);
    g_error_fd = ::dup(2);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::close(null);
  }
  const int code = run_cli(argc, argv);
  std::cout << std::flush;
  if (world.size() > 1 && code != 0 && !g_agreed_exit) {
    if (world.rank() != 0) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::cerr << std::flush;
    world.abort(code);
  }
  hw::comm::finish_world();
  return code;
}

namespace {

int run_cli(int argc, char** argv) {
  using namespace hw::cli;
  const std::string version = std::string(kVersion) + (*kGitCommit ? std::string(" (") + kGitCommit + ")" : "");
  CLI::App app{"Heartwave " + version +
               ": cardiac electrophysiology simulator (tissue, cell models, single cells, populations)"};
  // With where run-time compiled models find their headers: what to check first when a copied
  // or installed binary falls back to the interpreter.
  app.set_version_flag(
      "--version",
      std::function<std::string()>([version] {
        const hw::model::RuntimeHeaders h = hw::model::runtime_headers();
        const char* cxx = std::getenv("HEARTWAVE_CXX");
        return "heartwave " + version + "\nrun-time headers: " + h.dir + " (" + h.source +
               (h.found ? "" : "; missing: user models will run in the interpreter") + ")\nC++ compiler: " +
               (cxx && *cxx ? std::string(cxx) + " (HEARTWAVE_CXX)" : std::string("c++"));
      }),
      "the version (and git commit of the build), where run-time compiled models find their headers, and exit");
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
    // Only a tissue run (and its benchmarks) splits; any other command under mpirun would run
    // N times over the same files.
    if (hw::comm::world().size() > 1 && !app.got_subcommand("run") && !app.got_subcommand("bench") &&
        !app.got_subcommand("sweep"))
      throw hw::Error(fmt::format("only heartwave run, sweep and bench split over ranks; run this command without mpirun "
                                  "(it was started as {} ranks)", hw::comm::world().size()));
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
    report(fmt::format("heartwave: {}\n{}(run with --help for usage)\n", e.what(), command_line_hint(app, argc, argv)));
    return 2;
  } catch (const hw::InputError& e) {
    std::string text;
    for (const auto& d : e.diagnostics()) text += d.str() + '\n';
    report(text);
    return 1;
  } catch (const hw::Error& e) {
    report(fmt::format("heartwave: error: {}\n", e.what()));
    return 1;
  } catch (const std::exception& e) {
    report(fmt::format("heartwave: internal error: {}\n", e.what()));
    return 1;
  }
}

}  // namespace
