// `heartwave cell`, `heartwave sweep` and `heartwave restitution`: thin layers over
// cell/single_cell, cell/population and cell/restitution.
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "cell/json_writer.hpp"
#include "cell/population.hpp"
#include "cell/population_gpu.hpp"
#include "cell/restitution.hpp"
#include "cell_state.hpp"
#include "comm/world.hpp"
#include "common.hpp"
#include "device/driver.hpp"
#include "ranks.hpp"
#include "core/atomic_file.hpp"
#include "run/state_file.hpp"
#include "study_stop.hpp"

namespace hw::cli {

namespace {

// Every rank's text, in rank order, on every rank (collective; one rank: its own).
std::vector<std::string> gather_text(comm::Communicator& world, const std::string& mine) {
  const std::size_t R = std::size_t(world.size()), me = std::size_t(world.rank());
  if (R == 1) return {mine};
  std::vector<std::uint64_t> len(R, 0);
  len[me] = mine.size();
  std::vector<std::size_t> off(R), cnt(R, sizeof(std::uint64_t));
  for (std::size_t r = 0; r < R; ++r) off[r] = r * sizeof(std::uint64_t);
  world.allgather(len.data(), off, cnt);
  std::size_t total = 0;
  for (std::size_t r = 0; r < R; ++r) off[r] = total, cnt[r] = len[r], total += len[r];
  std::string all(total, '\0');
  std::copy(mine.begin(), mine.end(), all.begin() + std::ptrdiff_t(off[me]));
  world.allgather(all.data(), off, cnt);
  std::vector<std::string> out;
  for (std::size_t r = 0; r < R; ++r) out.push_back(all.substr(off[r], cnt[r]));
  return out;
}

void write_beats_json(cell::JsonWriter& j, const std::vector<cell::BeatBiomarkers>& beats,
                      const std::vector<double>& changes) {
  j.key("beats").begin_array();
  for (std::size_t i = 0; i < beats.size(); ++i) {
    const auto& b = beats[i];
    j.begin_object();
    j.key("beat").value(b.beat);
    j.key("t_start").value(b.t_start);
    j.key("apd90").value(b.apd90);
    j.key("apd50").value(b.apd50);
    j.key("apd30").value(b.apd30);
    j.key("dvdt_max").value(b.dvdt_max);
    j.key("v_peak").value(b.v_peak);
    j.key("v_rest").value(b.v_rest);
    j.key("cat_amplitude").value(b.cat_amplitude);
    j.key("catd90").value(b.catd90);
    if (i < changes.size()) j.key("state_change").value(changes[i]);  // cell/steady_state.hpp
    j.end_object();
  }
  j.end_array();
}

}  // namespace

void add_cell_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("cell", "Pace one cell and print biomarkers per beat");
  auto f = std::make_shared<SimFlags>();
  auto output = std::make_shared<std::string>();
  auto interval = std::make_shared<double>(1.0);
  auto json = std::make_shared<bool>(false);
  auto algebraics = std::make_shared<bool>(false);
  f->add_to(*cmd, true);
  cmd->add_option("--output,-o", *output, "write the trace to this CSV (t in ms, V in mV, states)");
  cmd->add_option("--output-interval", *interval, "trace row interval in ms (rounded to a whole number of steps)")
      ->check(kPositive)
      ->capture_default_str();
  cmd->add_flag("--algebraics", *algebraics, "add every algebraic variable to the trace");
  cmd->add_flag("--json", *json, "print the biomarkers as JSON on stdout");
  auto steady = std::make_shared<double>(0.0);
  auto save = std::make_shared<std::string>();
  cmd->add_option("--until-steady", *steady,
                  "pace until a beat changes the state by less than TOL (max relative change at the same phase; "
                  "--beats is the cap, 1000 unless given; docs/single-cell.md)")
      ->check(kPositive);
  cmd->add_option("--save-state", *save, "write the state at the end of the last beat to this file (TOML)");
  cmd->footer(
      "Time is in ms and V in mV whatever the model's own units; dimensionless models\n"
      "(MFHN, Karma, Aliev-Panfilov, ...) are run with their time unit taken as ms.\n"
      "The model's stimulus protocol is replaced by periodic pacing with its own amplitude\n"
      "and duration (docs/single-cell.md).\n\n"
      "Examples:\n"
      "  heartwave cell                                   # the default case: " +
      std::string("built-in ten Tusscher 2006 epi (MFHN if absent), writes trace.csv\n") +
      "  heartwave cell tentusscher_2006_epi --bcl 500 --beats 10\n"
      "  heartwave cell ../shared/models/cellml/luo_rudy_1991.cellml -i cvode --rtol 1e-8 --json\n"
      "  heartwave cell luo_rudy_1991 -p g_K_max=0.141 -o trace.csv --output-interval 0.1\n"
      "  heartwave cell ../shared/models/cellml/noble_1962.cellml --stim-amplitude 200 --stim-duration 2"
      "   # µA/cm², Cm 12 µF/cm²\n"
      "  heartwave cell luo_rudy_1991 --until-steady 1e-5 --save-state lr91.state\n"
      "  heartwave restitution luo_rudy_1991 --initial-state lr91.state --n-s1 2 --s2 300:800:100");
  cmd->callback([=, &action] {
    const bool beats_given = cmd->count("--beats") > 0;
    action = [=]() {
      SimFlags flags = *f;
      if (*steady > 0 && !beats_given) flags.beats = kSteadyBeatCap;
      if (!save->empty()) check_writable(*save, "--save-state");
      std::string out_path = *output;
      if (flags.file.empty()) {
        flags.file = default_model();
        if (out_path.empty()) out_path = "trace.csv";
        std::cerr << fmt::format("heartwave cell: no FILE given; running the default case: "
                                 "built-in model '{}', {} beats at BCL {} ms, trace to {}\n",
                                 flags.file, flags.beats, flags.bcl, out_path);
      }
      if (!out_path.empty()) check_writable(out_path, "--output");
      run::PreparedCell p = prepare(flags);
      print_notes(p.loaded.notes);
      if (!p.integrator_note.empty()) std::cerr << p.integrator_note << '\n';
      print_state_warnings(p, "heartwave cell");
      cell::TraceOptions trace;
      trace.record = !out_path.empty();
      trace.interval_ms = *interval;
      trace.algebraics = *algebraics;
      cell::PacingControl control;
      control.steady_tolerance = *steady;
      const StudyStop stop;  // Ctrl-C: the finished beats and the trace so far are kept
      const auto r = cell::run_single_cell(*p.kernel, p.setup, p.train, p.solver, trace, control, stop.check());
      if (trace.record) {
        std::ostringstream csv;
        cell::write_trace_csv(r.trace, csv);
        io::write_file_atomic(out_path, csv.str(), /*durable=*/false);
      }
      if (!save->empty() && !r.stopped) save_cell_state(*save, p, run_options(flags), r, *steady);
      warn_if_not_following(r, flags.bcl, "heartwave cell");
      const std::string steady_line = steady_summary(r, *steady, flags.beats);
      if (steady_missed(r, *steady) && !r.stopped) std::cerr << "heartwave cell: warning: " << steady_line << '\n';
      const std::string name = p.setup.model_name.empty() ? flags.file : p.setup.model_name;
      if (*json) {
        cell::JsonWriter j;
        j.begin_object();
        j.key("model").value(name);
        j.key("kernel").value(p.how);
        j.key("integrator").value(cell::solver_name(p.solver));
        j.key("dt").value(p.solver.dt_ms);
        j.key("bcl").value(flags.bcl);
        j.key("stim_duration").value(p.stim_duration_ms);
        j.key("stim_amplitude").value(p.setup.stimulus_value());
        if (p.solver.cvode) {
          j.key("rtol").value(p.solver.rtol);
          j.key("atol").value(p.solver.atol);
        }
        if (trace.record) j.key("trace").value(out_path);
        if (*steady > 0) {
          j.key("until_steady").value(*steady);
          j.key("steady_beat").value(r.steady_beat);  // 0: not steady within --beats
        }
        j.key("follows_pacing").value(r.response.follows());
        if (!save->empty() && !r.stopped) j.key("state").value(*save);
        if (r.stopped) j.key("stopped_at_ms").value(r.t_stopped_ms);
        write_beats_json(j, r.beats, r.beat_changes);
        j.end_object();
        std::cout << j.str() << '\n';
      } else {
        std::cout << fmt::format("model {} ({}), {}", name, p.how, cell::solver_name(p.solver));
        if (!p.solver.cvode) std::cout << fmt::format(" dt {} ms", p.solver.dt_ms);
        else std::cout << fmt::format(" rtol {} atol {}", p.solver.rtol, p.solver.atol);
        std::cout << fmt::format(", BCL {} ms, stimulus {} for {} ms\n", flags.bcl,
                                 p.setup.stimulus_value(), p.stim_duration_ms);
        // A long run to a steady state: its last beats, not hundreds of rows.
        const std::size_t shown = *steady > 0 ? std::min<std::size_t>(r.beats.size(), 5) : r.beats.size();
        if (shown < r.beats.size())
          std::cout << fmt::format("(beats 1-{} not shown; --json lists them all)\n", r.beats.size() - shown);
        std::cout << cell::format_beats_table({r.beats.end() - long(shown), r.beats.end()}, p.setup.calcium >= 0);
        if (r.steady_beat > 0) std::cout << steady_line << '\n';
        if (trace.record)
          std::cout << fmt::format("trace: {} ({} rows)\n", out_path, r.trace.rows());
        if (!save->empty()) std::cout << fmt::format("state: {} (end of beat {})\n", *save, r.beats.size());
      }
      if (r.stopped)
        return stop.report("cell", r.beats.size(), std::size_t(flags.beats), "beats",
                           fmt::format("the finished beats are printed above{} (t = {} ms)",
                                       trace.record ? ", the trace to where it stopped is in " + out_path : "",
                                       format_ms(r.t_stopped_ms, flags.dt)),
                           "");
      return 0;
    };
  });
}

void add_sweep_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("sweep", "Run a population of cells with varied parameters");
  auto f = std::make_shared<SimFlags>();
  f->integrator = "auto";  // populations: a scheme measured to hold the model at --dt
  auto grid = std::make_shared<std::vector<std::string>>();
  auto random = std::make_shared<std::vector<std::string>>();
  auto lhs = std::make_shared<std::vector<std::string>>();
  auto csv = std::make_shared<std::string>();
  auto cells = std::make_shared<std::size_t>(0);
  auto seed = std::make_shared<unsigned long long>(1);
  auto threads = std::make_shared<int>(0);
  auto output = std::make_shared<std::string>();
  auto backend = std::make_shared<std::string>("auto");
  auto resume = std::make_shared<std::string>();
  auto ranks = std::make_shared<int>(0);
  f->add_to(*cmd, false);
  cmd->add_option("--grid", *grid, "scale a parameter on a grid: NAME=LO:HI:N (repeatable; all combinations)")
      ->check(kRangeWithCount);
  cmd->add_option("--random", *random, "scale uniformly at random: NAME=LO:HI (repeatable; with --cells)")->check(kRange);
  cmd->add_option("--lhs", *lhs, "Latin hypercube scalings: NAME=LO:HI (repeatable; with --cells)")->check(kRange);
  cmd->add_option("--csv", *csv, "CSV of absolute parameter values: header of names, one row per cell");
  cmd->add_option("--cells", *cells, "number of cells for --random/--lhs");
  cmd->add_option("--seed", *seed, "random seed")->capture_default_str();
  cmd->add_option("--threads", *threads, "OpenMP threads of the cpu backend (0 = default)")->check(kNonNegative);
  cmd->add_option("--backend", *backend,
                  "auto (the GPU where one and its driver are found, else cpu), cpu, cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--output,-o", *output, "biomarkers per cell (CSV); default: stdout");
  cmd->add_option("--resume", *resume,
                  "the CSV of an interrupted run of this sweep: its cells are kept, the others run "
                  "(output: this file unless -o)");
  cmd->add_option("--ranks", *ranks, "split the cells over N MPI ranks on this machine (starts mpirun; the same "
                                     "rows as one rank)")
      ->check(CLI::Range(1, 65536))
      ->type_name("N");
  auto* gpus = cmd->add_option("--gpus", "split the cells over N GPUs of this machine (--ranks N, --backend cuda)")
                   ->check(CLI::Range(1, 1024))
                   ->type_name("N");
  cmd->footer(
      "Biomarkers are those of the last beat of each cell. Grid, random and LHS values scale\n"
      "the model's defaults; --csv gives absolute values. On the GPU (--backend cuda, or auto\n"
      "where one is found) one thread runs each cell; the biomarkers match the cpu's to\n"
      "rounding (docs/single-cell.md). --kernel names a cpu kernel, so with --kernel other\n"
      "than auto, --backend auto runs on the cpu.\n\n"
      "Examples:\n"
      "  heartwave sweep tentusscher_2006_epi --grid g_Kr=0.5:1.5:5 --grid g_CaL=0.5:1.5:5 -o bio.csv\n"
      "  heartwave sweep ohara_rudy_2011_endo --lhs GKr_b=0.5:2 --lhs GNaL_b=0.5:2 --cells 20 --seed 7\n"
      "  heartwave sweep luo_rudy_1991 --random g_K_max=0.5:2 --cells 50 --threads 2 -o bio.csv\n"
      "  heartwave sweep tentusscher_2006_epi --lhs g_Kr=0.5:1.5 --cells 100000 --backend cuda -o bio.csv\n"
      "  heartwave sweep luo_rudy_1991 --random g_K_max=0.5:2 --cells 50 --ranks 2 -o bio.csv   # over 2 ranks\n"
      "  heartwave sweep tentusscher_2006_epi --lhs g_Kr=0.5:1.5 --cells 1000000 --gpus 2 -o bio.csv");
  cmd->callback([=, &action] {
    if (gpus->count()) {
      *ranks = gpus->as<int>();
      if (*backend == "cpu") throw CLI::ValidationError("--gpus", "--gpus runs the cuda backend, not cpu: use --ranks");
      *backend = "cuda";
    }
    action = [=]() {
      // --ranks/--gpus: this command again under mpirun; each rank runs a share of the cells
      // (the ranks are independent until rank 0 gathers the rows).
      if (*ranks > 1 && comm::world().size() == 1 && comm::launcher_ranks() == 0) return launch_ranks(*ranks);
      comm::Communicator& world = comm::world();
      const std::string out_path = output->empty() ? *resume : *output;
      if (!out_path.empty()) check_writable(out_path, "--output");
      const int modes = !grid->empty() + !random->empty() + !lhs->empty() + !csv->empty();
      if (modes != 1)
        throw CLI::ValidationError("sweep", "give exactly one of --grid, --random, --lhs or --csv");
      if ((!random->empty() || !lhs->empty()) && *cells == 0)
        throw CLI::ValidationError("sweep", "--random and --lhs need --cells N");
      SimFlags flags = *f;
      if (flags.file.empty()) flags.file = default_model();
      cell::PopulationDesign design;
      if (!grid->empty()) {
        std::vector<cell::ParameterRange> r;
        for (const auto& s : *grid) r.push_back(cell::parse_range(s, true));
        design = cell::grid_design(r);
      } else if (!csv->empty()) {
        design = cell::csv_design(*csv);
      } else {
        std::vector<cell::ParameterRange> r;
        for (const auto& s : random->empty() ? *lhs : *random) r.push_back(cell::parse_range(s, false));
        design = cell::random_design(r, *cells, *seed, !lhs->empty());
      }
      // --kernel names a cpu kernel: asked for by name, the run stays on the cpu.
      if (flags.kernel != "auto" && *backend == "cuda")
        throw CLI::ValidationError("--kernel", "--kernel " + flags.kernel + " names a cpu kernel; "
                                   "the GPU prints its own: leave --kernel auto or use --backend cpu");
      cell::SolverOptions solver;
      solver.cvode = flags.integrator == "cvode";
      std::string note;
      bool gpu = false;
      if (flags.kernel != "auto" && *backend == "auto")
        note = "backend auto: cpu, as --kernel " + flags.kernel + " names a cpu kernel";
      else
        gpu = cell::choose_population_gpu(*backend, solver, &note);
      run::PreparedCell p = prepare(flags, !gpu);
      print_notes(p.loaded.notes);
      if (!p.integrator_note.empty()) std::cerr << "sweep: " << p.integrator_note << '\n';
      print_state_warnings(p, "sweep");
      cell::PopulationOptions opt;
      opt.solver = p.solver;
      opt.threads = *threads;
      std::cerr << "sweep: " << note << "\n";
      // --resume: the cells in the file are kept; the others run as a design of their own.
      const auto kept = resume->empty() ? std::map<std::size_t, std::string>{}
                                        : read_sweep_rows(*resume, p.setup, design);
      const std::vector<std::size_t> left = cells_left(design, kept);
      // Split: rank r runs the r-th of `size` equal shares of the cells left, on GPU r of its host.
      // On the cpu the shares are whole chunks of the population's batches (opt.chunk cells):
      // a cell's lane in the vectorised loop, and so the last bits of its numbers (a vector
      // exp and a scalar one differ there), are then those of the one-rank run.
      const std::size_t R = std::size_t(world.size()), me = std::size_t(world.rank());
      const std::size_t unit = gpu ? 1 : std::max<std::size_t>(1, opt.chunk);
      const std::size_t units = (left.size() + unit - 1) / unit;
      const auto edge = [&](std::size_t r) { return std::min(left.size(), (r * units / R) * unit); };
      const std::vector<std::size_t> mine(left.begin() + std::ptrdiff_t(edge(me)),
                                          left.begin() + std::ptrdiff_t(edge(me + 1)));
      const cell::PopulationDesign todo = subset(design, mine);
      if (R > 1 && gpu) {
        if (world.local_size() > gpu::device_count())
          throw Error(fmt::format("sweep --backend cuda: {} ranks on this host but {} GPU(s): start at most one rank "
                                  "per GPU, or use --backend cpu",
                                  world.local_size(), gpu::device_count()));
        opt.gpu_device = world.local_rank();
      }
      std::cerr << fmt::format("sweep: {} cells of {} ({}), {}{}\n", design.cells(),
                               p.setup.model_name, p.how, cell::solver_name(p.solver),
                               kept.empty() ? "" : fmt::format("; {} done in {}, {} to run", kept.size(), *resume,
                                                               left.size()));
      const StudyStop stop;  // Ctrl-C: the cells done are written
      opt.stop = stop.check();
      cell::PopulationResult r;
      if (mine.empty()) {
        r.last_beat.clear();
      } else if (gpu) {
        cell::GpuPopulationInfo info;
        r = cell::run_population_gpu(p.loaded.analysed, p.setup, todo, p.train, opt, &info);
        std::cerr << fmt::format("sweep: GPU kernel {}; {:.2f} s on the device{}\n", info.kernel,
                                 info.device_ms / 1000,
                                 info.batch < design.cells() ? fmt::format(", {} cells at a time", info.batch) : "");
        r.nonfinite = info.nonfinite;
      } else {
        r = cell::run_population(*p.kernel, p.setup, todo, p.train, opt);
      }
      if (r.nonfinite > 0)
        std::cerr << fmt::format("sweep: warning: {} of {} cells went non-finite (NaN or inf) with {}: their "
                                 "biomarkers are NaN; a stiffer integrator (-i grl1, grl2) or a smaller --dt holds "
                                 "them\n",
                                 r.nonfinite, mine.size(), cell::solver_name(p.solver));
      // The new rows, labelled as in the whole design; split, every rank's reach every rank.
      std::map<std::size_t, std::string> rows = kept;
      std::string local;
      for (std::size_t k = 0; k < mine.size(); ++k)
        if (r.finished(k)) local += cell::population_csv_row(p.setup, todo, k, r.last_beat[k], mine[k]) + "\n";
      for (const std::string& block : gather_text(world, local))
        for (std::size_t a = 0, b; a < block.size(); a = b + 1) {
          b = block.find('\n', a);
          const std::string row = block.substr(a, b - a);
          rows[std::stoul(row.substr(0, row.find(',')))] = row;
        }
      // Every cell in order: the kept rows and the new ones.
      std::string csv = cell::population_csv_header(design) + "\n";
      for (const auto& [c, row] : rows) csv += row + "\n";
      const std::size_t done = rows.size();
      if (world.rank() == 0) emit(out_path, csv);
      g_agreed_exit = true;  // every rank has every row: they return the same
      if (done < design.cells())
        return stop.report("sweep", done, design.cells(), "cells",
                           out_path.empty() ? "their rows are on stdout" : "their rows are in " + out_path,
                           fmt::format("continue with the same command and --resume {}",
                                       out_path.empty() ? "FILE (the rows above, saved to FILE)" : out_path));
      if (!out_path.empty()) std::cerr << fmt::format("sweep: biomarkers in {}\n", out_path);
      return 0;
    };
  });
}

void add_restitution_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("restitution", "S1-S2 or dynamic restitution of one cell (APD90 vs DI)");
  auto f = std::make_shared<SimFlags>();
  auto n_s1 = std::make_shared<int>(10);
  auto s2 = std::make_shared<std::string>("250:1000:50");
  auto dynamic = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  auto resume = std::make_shared<std::string>();
  f->add_to(*cmd, true);
  cmd->add_option("--n-s1", *n_s1, "number of S1 beats at --bcl")->check(CLI::Range(1, 100000))->capture_default_str();
  cmd->add_option("--s2", *s2, "coupling intervals LO:HI:STEP in ms")->capture_default_str();
  cmd->add_option("--dynamic", *dynamic,
                  "the dynamic protocol instead: --beats beats (50 unless given) at each cycle length "
                  "LO:HI:STEP ms, from HI down to LO");
  cmd->add_option("--output,-o", *output, "write the CSV to this file (checked before the run); default: stdout");
  auto save = std::make_shared<std::string>();
  cmd->add_option("--save-state", *save,
                  "write the paced state to this file: S1-S2, at the end of the S1 beats; --dynamic, at the end "
                  "of the shortest cycle length");
  cmd->add_option("--resume", *resume,
                  "S1-S2: the CSV of an interrupted run of this protocol: its rows are kept, the other "
                  "coupling intervals run (output: this file unless -o)");
  cmd->footer(
      "--beats N is the number of S1 beats (as --n-s1; give one of them), or with --dynamic the beats\n"
      "per cycle length; --stim-start delays the first stimulus. --initial-state FILE starts the S1\n"
      "beats (or the first cycle length) from a saved state, e.g. a steady one, so a few S1 beats do.\n"
      "S1-S2 prints CSV: coupling interval, DI = CI - APD90(last S1) (negative: S2 came before\n"
      "S1 repolarised), APD90 of S1 (its whole beat, the same in every row) and of S2 (ms), and\n"
      "whether S2 captured (a full action potential: at least 80 % of the S1's upstroke, back\n"
      "to 90 %); APD90 of S2 is nan where it did not.\n"
      "--dynamic prints CSV: cycle length, DI = BCL - APD90, APD90 of the last beat, and whether\n"
      "the last two beats were both full action potentials (nan APD90 where not: 2:1 block).\n\n"
      "Examples:\n  heartwave restitution tentusscher_2006_epi --bcl 1000 --n-s1 10 --s2 250:800:25\n"
      "  heartwave restitution tentusscher_2006_epi --dynamic 400:1000:200 --beats 10 -o dynamic.csv");
  cmd->callback([=, &action] {
    const bool beats_given = cmd->count("--beats") > 0, n_s1_given = cmd->count("--n-s1") > 0;
    const bool dyn = !dynamic->empty();
    std::vector<std::string> s1s2_only;
    for (const char* o : {"--n-s1", "--s2", "--bcl"})
      if (cmd->count(o) > 0) s1s2_only.push_back(o);
    action = [=]() {
      SimFlags flags = *f;
      if (flags.file.empty()) flags.file = default_model();
      const std::string out_path = output->empty() ? *resume : *output;
      if (!out_path.empty()) check_writable(out_path, "--output");
      if (dyn && !resume->empty())
        throw CLI::ValidationError("--resume", "the dynamic protocol carries each cycle length's state to the next, "
                                   "so its rows cannot be skipped: run it again (S1-S2 rows can be resumed)");
      // No option is taken and then ignored: those that mean nothing to the protocol chosen
      // are refused.
      if (beats_given && n_s1_given)
        throw CLI::ValidationError("--beats", "--beats and --n-s1 both set the number of S1 beats: give one");
      if (dyn && !s1s2_only.empty())
        throw CLI::ValidationError(s1s2_only[0], s1s2_only[0] + " is for S1-S2; --dynamic takes its cycle lengths "
                                                                "from LO:HI:STEP and its beats from --beats");
      if (flags.model_stimulus)
        throw CLI::ValidationError("--model-stimulus", "restitution paces the cell itself: --model-stimulus does not apply");
      if (!save->empty()) check_writable(*save, "--save-state");
      const auto r = cell::parse_range((dyn ? "dynamic=" : "s2=") + (dyn ? *dynamic : *s2), true);  // LO:HI:STEP
      if (!(r.hi >= r.lo) || r.n <= 0)
        throw CLI::ValidationError(dyn ? "--dynamic" : "--s2", "expected LO:HI:STEP with LO <= HI and STEP > 0");
      std::vector<double> range;
      for (double x = r.lo; x <= r.hi + 1e-9; x += r.n) range.push_back(x);
      if (dyn) flags.bcl = range.back();  // the first cycle length run (auto's probe, --initial-state's check)
      run::PreparedCell p = prepare(flags);
      print_notes(p.loaded.notes);
      if (!p.integrator_note.empty()) std::cerr << p.integrator_note << '\n';
      print_state_warnings(p, "restitution");
      std::vector<double> end_state;
      int beats_run = 0;
      std::string csv;
      std::size_t done = 0;
      const StudyStop stop;  // Ctrl-C: the rows done are written
      if (dyn) {
        cell::DynamicOptions o;
        o.bcl_ms.assign(range.rbegin(), range.rend());
        o.beats = beats_given ? flags.beats : 50;
        o.duration_ms = p.stim_duration_ms;
        o.start_ms = flags.stim_start;
        o.stop = stop.check();
        beats_run = o.beats;
        csv = "bcl_ms,di_ms,apd90,captured\n";
        for (const auto& q : cell::run_dynamic(*p.kernel, p.setup, o, p.solver, &end_state))
          csv += fmt::format("{},{},{},{}\n", q.bcl_ms, q.di_ms, q.apd90, int(q.captured)), ++done;
      } else {
        const std::string header = "coupling_ms,di_ms,apd90_s1,apd90_s2,captured";
        std::map<std::string, std::string> rows;  // by coupling interval as written
        for (const auto& row : resume->empty() ? std::vector<std::string>{} : read_resume_rows(*resume, header))
          rows[first_field(row)] = row;
        cell::RestitutionOptions o;
        for (double ci : range)
          if (!rows.count(fmt::format("{}", ci))) o.coupling_ms.push_back(ci);
        if (rows.size() + o.coupling_ms.size() != range.size())
          throw InputError(SourceLoc{*resume, 0, 0}, "--resume: the file has coupling intervals that --s2 does not "
                                                     "give: resume with the same --s2 as the interrupted run");
        o.s1_bcl_ms = flags.bcl;
        o.n_s1 = beats_given ? flags.beats : *n_s1;
        o.duration_ms = p.stim_duration_ms;
        o.start_ms = flags.stim_start;
        o.stop = stop.check();
        beats_run = o.n_s1;
        const auto fresh = o.coupling_ms.empty() ? std::vector<cell::RestitutionPoint>{}
                                                 : cell::run_s1s2(*p.kernel, p.setup, o, p.solver, &end_state);
        for (const auto& q : fresh) {
          const std::string row =
              fmt::format("{},{},{},{},{}", q.coupling_ms, q.di_ms, q.apd90_s1, q.apd90_s2, int(q.captured));
          // The kept rows must be of the same S1 beats (model, BCL, --n-s1, dt, ...).
          for (const auto& [ci, kept] : rows)
            if (kept.find(',' + fmt::format("{}", q.apd90_s1) + ',') == std::string::npos)
              throw InputError(SourceLoc{*resume, 0, 0},
                               fmt::format("--resume: the row of {} ms has another APD90 of S1 than this run ({} "
                                           "ms): it was computed with other options; resume with the same ones",
                                           ci, q.apd90_s1));
          rows[fmt::format("{}", q.coupling_ms)] = row;
        }
        csv = header + "\n";
        for (double ci : range)
          if (const auto it = rows.find(fmt::format("{}", ci)); it != rows.end()) csv += it->second + "\n", ++done;
      }
      // The state after the S1 beats (or the last cycle length), when they ran to the end.
      if (!save->empty() && !end_state.empty() && done == range.size()) {
        run::CellRunOptions ro = run_options(flags);
        if (dyn) ro.bcl_ms = range.front();  // the state is the shortest cycle length's
        run::write_state_file(*save, run::saved_state(p, ro, end_state, beats_run));
      }
      emit(out_path, csv);
      if (done < range.size())
        return stop.report("restitution", done, range.size(), dyn ? "cycle lengths" : "coupling intervals",
                           out_path.empty() ? "their rows are on stdout" : "their rows are in " + out_path,
                           dyn ? "" : fmt::format("continue with the same command and --resume {}",
                                                  out_path.empty() ? "FILE (the rows above, saved to FILE)" : out_path));
      return 0;
    };
  });
}

}  // namespace hw::cli
