// `heartwave model inspect|convert|compile|list`: what the model compiler sees and makes.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cell/auto_integrator.hpp"
#include "cell/json_writer.hpp"
#include "common.hpp"
#include "model/passes/tabulate.hpp"
#include "model/analysis/roles.hpp"
#include "model/emit/cellml2_printer.hpp"
#include "model/emit/cpp_printer.hpp"
#include "model/emit/sbml_printer.hpp"
#include "device/embedded.hpp"
#include "model/emit/cuda_printer.hpp"
#include "model/emit/interpreter.hpp"
#include "model/emit/block_solver.hpp"
#include "model/emit/op_count.hpp"
#include "model/frontend/cellml/cellml.hpp"
#include "model/frontend/hwm/hwm.hpp"
#include "model/ir/print.hpp"
#include "model/load.hpp"
#include "model/passes/linear_blocks.hpp"
#include "model/passes/thresholds.hpp"
#include "model/jit/builtin_registry.hpp"

namespace hw::cli {

namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError(SourceLoc{path, 0, 0}, "cannot open for writing");
  out << text;
  if (!out) throw InputError(SourceLoc{path, 0, 0}, "writing failed");
}

std::string units_of(const model::Symbol& s) { return s.units_name.empty() ? "-" : s.units_name; }

// `--dt X`: the stiffness along a paced CVODE beat and the scheme `auto` picks at X.
struct StiffnessSection {
  std::vector<cell::StateStiffness> states;  // stiffest first
  std::vector<std::string> names;
  double dt_model = 0;
  std::string recommended;
};

StiffnessSection stiffness_at(const std::string& file, const RoleFlags& roles, double dt_ms) {
  model::LoadOptions lo;
  lo.roles = roles.overrides();
  const model::LoadedModel lm = model::load_model(file, lo);
  const cell::CellSetup setup = cell::make_cell_setup(lm.analysed, lm.stimulus);
  const auto kernel = model::make_interpreter(lm.analysed);
  const double duration = lm.stimulus.default_duration_ms.value_or(1.0);
  StiffnessSection out;
  out.states = cell::measure_stiffness(*kernel, setup, 1000, duration);
  std::sort(out.states.begin(), out.states.end(),
            [](const auto& a, const auto& b) { return a.most_negative < b.most_negative; });
  out.names = setup.state_names;
  out.dt_model = dt_ms / setup.time_to_ms;
  cell::AutoOptions ao;
  ao.dt_ms = dt_ms;
  ao.stim_duration_ms = duration;
  try {
    out.recommended = cell::choose_integrator(lm.analysed, *kernel, setup, ao).why;
  } catch (const InputError& e) {
    out.recommended = e.what();
  }
  return out;
}

int inspect(const std::string& file, const RoleFlags& roles, bool dump, const std::string& dump_pass,
            bool json, std::optional<double> dt, bool tables, bool fast) {
  model::LoadOptions lo;
  lo.roles = roles.overrides();
  lo.keep_model_stimulus = true;  // show the model itself; pacing is reported below
  if (dump) {
    lo.pipeline.after_each = [&](const std::string& pass, const model::Model& m) {
      if (dump_pass.empty() || dump_pass == "all" || dump_pass == pass)
        std::cout << fmt::format("=== IR after {} ===\n{}\n", pass, model::dump(m));
    };
  }
  const model::LoadedModel lm = model::load_model(file, lo);
  const auto& src = lm.source;
  const auto& an = lm.analysed;
  std::string pacing;
  try {
    model::Model copy = src;
    const auto info = model::prepare_pacing(copy);
    if (info.kind == model::StimulusInfo::Kind::rewritten)
      pacing = fmt::format("replaces {} by {} x {}{}{}", info.current_name,
                           info.amplitude_scale == 1 ? info.amplitude_param
                                                     : fmt::format("{}*{}", info.amplitude_scale, info.amplitude_param),
                           info.on_param,
                           info.default_amplitude ? fmt::format(" (on: {})", *info.default_amplitude) : "",
                           info.default_duration_ms ? fmt::format(", duration {} ms", *info.default_duration_ms) : "");
    else
      pacing = "no stimulus current: adds amplitude x on to dV/dt (needs --stim-amplitude, --stim-duration)";
  } catch (const InputError& e) {
    pacing = "not possible: " + e.diagnostics().front().message;
  }
  if (dump) return 0;
  std::optional<StiffnessSection> stiff;
  if (dt) stiff = stiffness_at(file, roles, *dt);
  if (json) {
    cell::JsonWriter j;
    j.begin_object();
    j.key("model").value(src.name);
    j.key("source").value(src.source_file);
    j.key("states").begin_array();
    for (std::size_t i = 0; i < src.states.size(); ++i) {
      j.begin_object().key("name").value(src.states[i].name).key("initial").value(src.states[i].initial);
      j.key("units").value(src.states[i].units_name);
      j.key("gate").value(i < an.analysis.size() && an.analysis[i].is_gate).end_object();
    }
    j.end_array();
    j.key("parameters").begin_array();
    for (const auto& p : src.parameters)
      j.begin_object().key("name").value(p.name).key("value").value(p.value).key("units").value(p.units_name).end_object();
    j.end_array();
    j.key("algebraics").value(static_cast<long long>(src.algebraics.size()));
    j.key("roles").value(model::describe_roles(src));
    j.key("pacing").value(pacing);
    j.key("repairs").begin_array();
    for (const auto& r : an.repairs)
      j.begin_object().key("where").value(r.where).key("variable").value(r.variable)
          .key("point").value(r.point).key("half_width").value(r.half_width).key("method").value(r.method).end_object();
    j.end_array();
    j.key("double_in_float").begin_array();
    for (const auto& a : an.algebraics)
      if (a.wide) j.value(a.name);
    j.end_array();
    j.key("warnings").begin_array();
    for (const auto& d : lm.notes) j.value(d.str());
    j.end_array();
    j.key("linear_blocks").begin_array();
    const std::vector<model::BlockPattern> patterns = model::block_patterns(an);
    for (std::size_t k = 0; k < an.blocks.size(); ++k) {
      const auto& b = an.blocks[k];
      j.begin_object().key("states").begin_array();
      for (auto i : b.states) j.value(an.states[i].name);
      j.end_array().key("conserves").value(b.conserves);
      j.key("nonzero").value(patterns[k].a_entries()).key("lu_entries").value(patterns[k].lu_entries()).end_object();
    }
    j.end_array();
    j.key("state_thresholds").begin_array();
    for (model::ExprId g : an.thresholds) j.value(model::to_infix(an, g));
    j.end_array();
    j.key("operations_per_cell_step").begin_object();
    for (int k = 0; k < cell::kIntegratorCount; ++k) {
      const auto method = static_cast<cell::Integrator>(k);
      const model::OpCount c = model::count_operations(an, method);
      j.key(cell::integrator_name(method)).begin_object().key("flops").value(c.flops)
          .key("divisions").value(c.divisions)
          .key("distinct_divisors").value(c.distinct_divisors).key("divisions_by_literal").value(c.constant_divisions).key("selects").value(c.selects).key("specials").begin_object();
      for (const auto& [name, n] : c.specials) j.key(name).value(n);
      j.end_object().end_object();
    }
    j.end_object();
    if (tables) {
      const model::Tabulation t = model::tabulate_voltage_functions(an);
      j.key("lookup_tables").begin_object();
      j.key("range_mV").begin_array().value(t.options.v_min_mV).value(t.options.v_max_mV).end_array();
      j.key("tolerance").value(t.options.tolerance).key("entries").value(static_cast<long long>(t.entries()));
      if (!t.not_tabulated.empty()) j.key("none_because").value(t.not_tabulated);
      j.key("functions").begin_array();
      for (const auto& f : t.functions)
        j.begin_object().key("function").value(f.label).key("spacing_mV").value(t.groups[std::size_t(f.group)].step * t.v2mV)
            .key("max_error").value(f.max_error).end_object();
      j.end_array();
      j.key("exact").begin_array();
      for (const auto& s : t.left_exact) j.value(s);
      j.end_array().end_object();
    }
    if (fast) {
      const model::FastIntrinsicCount f = model::count_fast_intrinsics(an);
      j.key("fast_intrinsics").begin_object().key("exp").value(f.exp).key("log").value(f.log).key("pow").value(f.pow)
          .key("divisions").value(f.div).end_object();
    }
    if (stiff) {
      j.key("stiffness").begin_array();
      for (const auto& st : stiff->states)
        j.begin_object().key("state").value(stiff->names[std::size_t(st.state)])
            .key("most_negative_jacobian").value(st.most_negative).key("at_ms").value(st.at_ms)
            .key("j_dt").value(-st.most_negative * stiff->dt_model).end_object();
      j.end_array();
      j.key("recommended").value(stiff->recommended);
    }
    j.end_object();
    std::cout << j.str() << '\n';
    return 0;
  }
  std::cout << fmt::format("model {}  ({})\n", src.name, src.source_file);
  if (!src.citation.empty()) std::cout << "citation: " << src.citation << '\n';
  std::size_t gates = 0;
  std::cout << fmt::format("\nstates ({}):\n", src.states.size());
  for (std::size_t i = 0; i < src.states.size(); ++i) {
    const bool gate = i < an.analysis.size() && an.analysis[i].is_gate;
    gates += gate;
    std::cout << fmt::format("  {:<28} {:>14} {:<14}{}\n", src.states[i].name, src.states[i].initial,
                             units_of(src.states[i]), gate ? " gate" : "");
  }
  std::cout << fmt::format("\nparameters ({}):\n", src.parameters.size());
  for (const auto& p : src.parameters)
    std::cout << fmt::format("  {:<28} {:>14} {}\n", p.name, p.value, units_of(p));
  std::size_t once = 0;
  for (const auto& a : an.algebraics) once += a.once_per_cell;
  std::cout << fmt::format("\nalgebraics: {} in the model; {} after passes ({} once per cell)\n",
                           src.algebraics.size(), an.algebraics.size(), once);
  std::cout << fmt::format("gates found: {} of {} states (exact Rush-Larsen updates)\n", gates,
                           src.states.size());
  if (!an.blocks.empty())
    std::cout << model::describe_blocks(an) << "\n  compiled kernels factor each over its nonzeros, in minimum-degree order: " << model::describe_block_sparsity(an) << '\n';
  if (!an.thresholds.empty()) std::cout << model::describe_thresholds(an) << '\n';
  std::cout << "\nroles:\n" << model::describe_roles(src);
  std::cout << "pacing: " << pacing << '\n';
  std::cout << fmt::format("\nsingularities repaired: {}\n", an.repairs.size());
  for (const auto& r : an.repairs)
    std::cout << fmt::format("  {}: {} = {} ± {} ({})\n", r.where, r.variable, r.point, r.half_width, r.method);
  std::vector<std::string> wide;
  for (const auto& a : an.algebraics)
    if (a.wide) wide.push_back(a.name);
  if (!wide.empty())
    std::cout << fmt::format("\ncomputed in double by float kernels (they lose every digit in float): {}\n",
                             fmt::join(wide, ", "));
  for (const auto& d : lm.notes)
    if (d.code == "float.widened" || d.code == "float.nonfinite") std::cout << "  " << d.str() << '\n';
  std::cout << "\noperations per cell-step, as printed (flops: add, mul, neg, fabs, min, max; special-function "
               "calls by name; constants once per cell not counted):\n";
  for (int k = 0; k < cell::kIntegratorCount; ++k) {
    const auto method = static_cast<cell::Integrator>(k);
    std::cout << fmt::format("  {:<5} {}\n", cell::integrator_name(method), model::count_operations(an, method).str());
  }
  std::size_t warnings = 0;
  for (const auto& d : lm.notes) warnings += d.severity != Severity::note;
  std::cout << fmt::format("\nwarnings: {}\n", warnings);
  for (const auto& d : lm.notes)
    if (d.severity != Severity::note) std::cout << "  " << d.str() << '\n';
  if (tables)
    std::cout << "\n(--tables, --cell-maths tables: the CPU kernel's tables; a GPU kernel's, made after its fixed "
                 "parameters are compiled in, may hold more)\n"
              << model::tabulate_voltage_functions(an).report();
  if (fast)
    std::cout << "\nfast intrinsics (--fast, --cell-maths fast; float kernels only), per evaluation of the rates:\n  "
              << model::count_fast_intrinsics(an).str()
              << "\n  errors (CUDA programming guide): __expf 2 + 1.17·|x| ulp (most of it the rounding of x·log2 e), "
                 "__logf 2^-21.4 absolute on [0.5, 2], else 3 ulp, __powf from those two, __fdividef 2 ulp for "
                 "|y| in [2^-126, 2^126] (0 beyond);\n  kept exact: sin, cos and other functions, values computed in "
                 "double, the integrator's own expm1; the bounds CI checks on every shared model: "
                 "docs/verification.md\n";
  if (stiff) {
    std::cout << fmt::format("\nstiffness along a paced CVODE beat (BCL 1000 ms), at dt {} ms:\n", *dt);
    std::cout << "  state                        most negative df/dy    at (ms)   |df/dy|*dt\n";
    for (std::size_t k = 0; k < stiff->states.size() && k < 12; ++k) {
      const auto& st = stiff->states[k];
      const double jdt = -st.most_negative * stiff->dt_model;
      std::cout << fmt::format("  {:<28} {:>20.4g} {:>10.1f} {:>12.3g}{}\n", stiff->names[std::size_t(st.state)],
                               st.most_negative, st.at_ms, jdt, jdt > 2 ? "  beyond explicit stability" : "");
    }
    std::cout << "recommended: " << stiff->recommended << '\n';
  }
  return 0;
}

}  // namespace

void add_model_commands(CLI::App& app, Action& action) {
  auto* model = app.add_subcommand("model", "Inspect, convert, compile and list cell models");
  model->footer("Examples:\n  heartwave model list\n  heartwave model inspect luo_rudy_1991\n"
                "  heartwave model convert ../shared/models/cellml/luo_rudy_1991.cellml -o lr91.hwm\n"
                "Run `heartwave model COMMAND --help` for each command's options. Docs: docs/cli.md");
  model->require_subcommand(1);

  {
    auto* cmd = model->add_subcommand("inspect", "States, parameters, roles, gates, repairs, unit warnings");
    auto file = std::make_shared<std::string>();
    auto roles = std::make_shared<RoleFlags>();
    auto dump = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("FILE", *file, "model file or built-in name")->required();
    auto* d = cmd->add_option("--dump-ir", *dump, "print the IR after each pass (or only after PASS)")
                  ->expected(0, 1);
    cmd->add_flag("--json", *json, "print as JSON");
    auto tables = std::make_shared<bool>(false);
    cmd->add_flag("--tables", *tables,
                  "also list the functions of V that --cell-maths tables (time.cell_maths = \"tables\") looks "
                  "up in tables, with each one's measured error");
    auto fast = std::make_shared<bool>(false);
    cmd->add_flag("--fast", *fast,
                  "also count what --cell-maths fast (time.cell_maths = \"fast\") replaces by the GPU's fast "
                  "intrinsics, with each intrinsic's error");
    auto dt = std::make_shared<std::optional<double>>();
    cmd->add_option("--dt", *dt,
                    "also measure stiffness along a paced beat and the scheme `-i auto` picks at this dt (ms)")
        ->check(CLI::PositiveNumber);
    roles->add_to(*cmd);
    cmd->footer("Examples:\n  heartwave model inspect ../shared/models/cellml/tentusscher_panfilov_2006_epi.cellml\n"
                "  heartwave model inspect mfhn --dump-ir=cse\n  heartwave model inspect luo_rudy_1991 --json\n"
                "  heartwave model inspect ohara_rudy_2011_endo --dt 0.02   # stiffness and the scheme to use\n"
                "  heartwave model inspect tentusscher_2006_epi --tables   # what lookup tables replace\n"
                "  heartwave model inspect tentusscher_2006_epi --fast     # what the fast intrinsics replace");
    cmd->callback([=, &action] {
      action = [=] { return inspect(*file, *roles, d->count() > 0, *dump, *json, *dt, *tables, *fast); };
    });
  }
  {
    auto* cmd = model->add_subcommand(
        "convert", "Convert a model (CellML, SBML or .hwm) to .hwm, CellML 2.0 or SBML");
    auto file = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto to = std::make_shared<std::string>();
    cmd->add_option("FILE", *file, "model file: .cellml, .sbml, .xml (CellML or SBML) or .hwm")->required();
    cmd->add_option("--output,-o", *out, "the file to write; its extension picks the format (.hwm, .cellml, .sbml)")
        ->required();
    cmd->add_option("--to", *to, "the format to write, whatever the extension: hwm, cellml (2.0) or sbml (L3V2)")
        ->check(CLI::IsMember({"hwm", "cellml", "sbml"}));
    cmd->footer("Examples:\n  heartwave model convert ../shared/models/cellml/luo_rudy_1991.cellml -o luo_rudy_1991.hwm\n"
                "  heartwave model convert ../shared/models/cellml/luo_rudy_1991.cellml -o lr91.sbml\n"
                "  heartwave model convert ../shared/models/cellml/luo_rudy_1991.cellml -o lr91.xml --to cellml");
    cmd->callback([=, &action] {
      action = [=] {
        std::string format = *to;
        if (format.empty()) {
          const std::string ext = std::filesystem::path(*out).extension().string();
          if (ext == ".hwm") format = "hwm";
          else if (ext == ".cellml") format = "cellml";
          else if (ext == ".sbml") format = "sbml";
          else
            throw CLI::ValidationError("--output", fmt::format("cannot tell the format to write from '{}': name it .hwm, "
                                         ".cellml or .sbml, or say --to hwm|cellml|sbml", *out));
        }
        const model::Model m = model::read_model_file(*file);
        std::string text;
        if (format == "hwm") {
          text = fmt::format(
              "# Converted by `heartwave model convert` from {}\n# (the model as read: before "
              "Heartwave's passes and pacing).\n",
              std::filesystem::path(*file).filename().string());
          text += model::write_hwm(m);
        } else {
          text = format == "cellml" ? model::print_cellml2(m) : model::print_sbml(m);
        }
        write_file(*out, text);
        std::cerr << fmt::format("wrote {} ({}: {} states, {} parameters, {} algebraics)\n", *out,
                                 format == "cellml" ? "CellML 2.0" : format == "sbml" ? "SBML L3V2" : ".hwm",
                                 m.states.size(), m.parameters.size(), m.algebraics.size());
        return 0;
      };
    });
  }
  {
    auto* cmd = model->add_subcommand("compile", "Print the model as C++ (CPU) or CUDA C++");
    auto file = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto target = std::make_shared<std::string>("cpp");
    auto paced = std::make_shared<bool>(false);
    cmd->add_option("FILE", *file, "model file or built-in name")->required();
    cmd->add_option("--target", *target, "cpp or cuda")->check(CLI::IsMember({"cpp", "cuda"}))->capture_default_str();
    cmd->add_option("--output,-o", *out, "file to write")->required();
    cmd->add_flag("--paced", *paced, "include Heartwave's pacing parameters (_hw_stim_on, ...)");
    cmd->footer("Examples:\n  heartwave model compile mfhn --target cpp -o mfhn.cpp\n"
                "  heartwave model compile ../shared/models/cellml/ohara_rudy_2011_endo.cellml --target cuda -o ord.cu");
    cmd->callback([=, &action] {
      action = [=] {
        model::LoadOptions lo;
        lo.keep_model_stimulus = !*paced;
        const auto lm = model::load_model(*file, lo);
        print_notes(lm.notes);
        // The CUDA file stands alone (nvcc -arch=sm_90 FILE); the C++ one is a translation
        // unit of heartwave's run-time kernels and compiles against its src/.
        write_file(*out, *target == "cuda" ? gpu::inline_embedded_includes(model::print_cuda(lm.analysed))
                                           : model::print_cpp(lm.analysed));
        std::cerr << fmt::format("wrote {}\n", *out);
        return 0;
      };
    });
  }
  {
    auto* cmd = model->add_subcommand("list", "List the built-in models");
    cmd->footer("Example:\n  heartwave model list");
    cmd->callback([&action] {
      action = [] {
        for (const auto& n : model::builtin_model_names()) {
          std::string cite;
          try {
            cite = model::load_model(n, {.roles = {}, .pipeline = {}, .keep_model_stimulus = true}).source.citation;
          } catch (const std::exception&) {
          }
          if (cite.size() > 90) cite = cite.substr(0, 87) + "...";
          std::cout << fmt::format("{:<28} {}\n", n, cite);
        }
        return 0;
      };
    });
  }
}

}  // namespace hw::cli
