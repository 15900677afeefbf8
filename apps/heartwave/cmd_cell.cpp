// `heartwave cell`, `heartwave sweep` and `heartwave restitution`: thin layers over
// cell/single_cell, cell/population and cell/restitution.
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "cell/json_writer.hpp"
#include "cell/population.hpp"
#include "cell/population_gpu.hpp"
#include "cell/restitution.hpp"
#include "common.hpp"
#include "core/atomic_file.hpp"

namespace hw::cli {

namespace {

void write_beats_json(cell::JsonWriter& j, const std::vector<cell::BeatBiomarkers>& beats) {
  j.key("beats").begin_array();
  for (const auto& b : beats) {
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
      "   # µA/cm², Cm 12 µF/cm²");
  cmd->callback([=, &action] {
    action = [=]() {
      SimFlags flags = *f;
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
      cell::TraceOptions trace;
      trace.record = !out_path.empty();
      trace.interval_ms = *interval;
      trace.algebraics = *algebraics;
      const auto r = cell::run_single_cell(*p.kernel, p.setup, p.train, p.solver, trace);
      if (trace.record) cell::write_trace_csv(r.trace, out_path);
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
        write_beats_json(j, r.beats);
        j.end_object();
        std::cout << j.str() << '\n';
      } else {
        std::cout << fmt::format("model {} ({}), {}", name, p.how, cell::solver_name(p.solver));
        if (!p.solver.cvode) std::cout << fmt::format(" dt {} ms", p.solver.dt_ms);
        else std::cout << fmt::format(" rtol {} atol {}", p.solver.rtol, p.solver.atol);
        std::cout << fmt::format(", BCL {} ms, stimulus {} for {} ms\n", flags.bcl,
                                 p.setup.stimulus_value(), p.stim_duration_ms);
        std::cout << cell::format_beats_table(r.beats, p.setup.calcium >= 0);
        if (trace.record)
          std::cout << fmt::format("trace: {} ({} rows)\n", out_path, r.trace.rows());
      }
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
      "  heartwave sweep tentusscher_2006_epi --lhs g_Kr=0.5:1.5 --cells 100000 --backend cuda -o bio.csv");
  cmd->callback([=, &action] {
    action = [=]() {
      if (!output->empty()) check_writable(*output, "--output");
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
      cell::PopulationOptions opt;
      opt.solver = p.solver;
      opt.threads = *threads;
      std::cerr << "sweep: " << note << "\n";
      std::cerr << fmt::format("sweep: {} cells of {} ({}), {}\n", design.cells(),
                               p.setup.model_name, p.how, cell::solver_name(p.solver));
      cell::PopulationResult r;
      if (gpu) {
        cell::GpuPopulationInfo info;
        r = cell::run_population_gpu(p.loaded.analysed, p.setup, design, p.train, opt, &info);
        std::cerr << fmt::format("sweep: GPU kernel {}; {:.2f} s on the device{}\n", info.kernel,
                                 info.device_ms / 1000,
                                 info.batch < design.cells() ? fmt::format(", {} cells at a time", info.batch) : "");
      } else {
        r = cell::run_population(*p.kernel, p.setup, design, p.train, opt);
      }
      if (output->empty()) {
        cell::write_population_csv(p.setup, design, r, std::cout);
      } else {
        std::ofstream out(*output);
        if (!out) throw InputError(SourceLoc{*output, 0, 0}, "cannot open for writing");
        cell::write_population_csv(p.setup, design, r, out);
        std::cerr << fmt::format("sweep: biomarkers in {}\n", *output);
      }
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
  f->add_to(*cmd, true);
  cmd->add_option("--n-s1", *n_s1, "number of S1 beats at --bcl")->check(CLI::Range(1, 100000))->capture_default_str();
  cmd->add_option("--s2", *s2, "coupling intervals LO:HI:STEP in ms")->capture_default_str();
  cmd->add_option("--dynamic", *dynamic,
                  "the dynamic protocol instead: --beats beats (50 unless given) at each cycle length "
                  "LO:HI:STEP ms, from HI down to LO");
  cmd->add_option("--output,-o", *output, "write the CSV to this file (checked before the run); default: stdout");
  cmd->footer(
      "S1-S2 prints CSV: coupling interval, DI = CI - APD90(last S1) (negative: S2 came before\n"
      "S1 repolarised), APD90 of S1 (its whole beat, the same in every row) and of S2 (ms), and\n"
      "whether S2 captured (a full action potential: at least 80 % of the S1's upstroke, back\n"
      "to 90 %); APD90 of S2 is nan where it did not.\n"
      "--dynamic prints CSV: cycle length, DI = BCL - APD90, APD90 of the last beat, and whether\n"
      "the last two beats were both full action potentials (nan APD90 where not: 2:1 block).\n\n"
      "Examples:\n  heartwave restitution tentusscher_2006_epi --bcl 1000 --n-s1 10 --s2 250:800:25\n"
      "  heartwave restitution tentusscher_2006_epi --dynamic 400:1000:200 --beats 10 -o dynamic.csv");
  cmd->callback([=, &action] {
    const bool beats_given = cmd->count("--beats") > 0;
    action = [=]() {
      SimFlags flags = *f;
      if (flags.file.empty()) flags.file = default_model();
      if (!output->empty()) check_writable(*output, "--output");
      const bool dyn = !dynamic->empty();
      const auto r = cell::parse_range((dyn ? "dynamic=" : "s2=") + (dyn ? *dynamic : *s2), true);  // LO:HI:STEP
      if (!(r.hi >= r.lo) || r.n <= 0)
        throw CLI::ValidationError(dyn ? "--dynamic" : "--s2", "expected LO:HI:STEP with LO <= HI and STEP > 0");
      std::vector<double> range;
      for (double x = r.lo; x <= r.hi + 1e-9; x += r.n) range.push_back(x);
      run::PreparedCell p = prepare(flags);
      print_notes(p.loaded.notes);
      if (!p.integrator_note.empty()) std::cerr << p.integrator_note << '\n';
      std::string csv;
      if (dyn) {
        cell::DynamicOptions o;
        o.bcl_ms.assign(range.rbegin(), range.rend());
        o.beats = beats_given ? flags.beats : 50;
        o.duration_ms = p.stim_duration_ms;
        csv = "bcl_ms,di_ms,apd90,captured\n";
        for (const auto& q : cell::run_dynamic(*p.kernel, p.setup, o, p.solver))
          csv += fmt::format("{},{},{},{}\n", q.bcl_ms, q.di_ms, q.apd90, int(q.captured));
      } else {
        cell::RestitutionOptions o;
        o.coupling_ms = range;
        o.s1_bcl_ms = flags.bcl;
        o.n_s1 = *n_s1;
        o.duration_ms = p.stim_duration_ms;
        csv = "coupling_ms,di_ms,apd90_s1,apd90_s2,captured\n";
        for (const auto& q : cell::run_s1s2(*p.kernel, p.setup, o, p.solver))
          csv += fmt::format("{},{},{},{},{}\n", q.coupling_ms, q.di_ms, q.apd90_s1, q.apd90_s2, int(q.captured));
      }
      if (output->empty())
        std::cout << csv;
      else
        io::write_file_atomic(*output, csv);
      return 0;
    };
  });
}

}  // namespace hw::cli
