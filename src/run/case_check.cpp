// See case_check.hpp.
#include "run/case_check.hpp"

#include "mesh/shapes.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>

#include <fmt/format.h>

#include "core/suggest.hpp"
#include "formats/image_summary.hpp"
#include "formats/vtk_image_reader.hpp"
#include "mesh/shapes.hpp"
#include "run/run.hpp"
#include "run/wall_time.hpp"
#include "tissue/case_codes.hpp"
#include "tissue/reaction.hpp"

namespace hw::run {

using namespace hw::tissue;

namespace {

void collect(const InputError& e, std::vector<Diagnostic>& out) {
  for (const Diagnostic& d : e.diagnostics())
    if (d.severity == Severity::error) out.push_back(d);
}

// output.fields and output.png_variable name the voltage or a state of a model of the case
// (what OutputManager asks of the simulation when the run opens its outputs).
void check_output_names(const SimSetup& s, DiagnosticSink& sink) {
  const OutputSpec& o = s.tcase.output;
  std::vector<std::string> states{"V"};
  for (const auto& [path, lm] : s.models)
    for (const auto& st : lm->analysed.states) states.push_back(st.name);
  auto check = [&](const std::string& name, const char* key) {
    if (std::find(states.begin(), states.end(), name) != states.end()) return;
    sink.add(case_code::problem(o.loc, fmt::format("{}: no model in this case has a state \"{}\"{}", key, name,
                                                   did_you_mean(name, states, 3)),
                                case_code::unknown_name));
  };
  for (const Diagnostic& d : sink.all())
    if (d.code == case_code::model_error || d.code == case_code::unknown_model) return;  // the name may be the failed model's
  for (const auto& v : o.variables) check(v, "output.fields");
  if (o.png_interval > 0) check(o.png_variable, "output.png_variable");
}

std::string mm_range(double lo, double hi) { return fmt::format("{:g}…{:g}", lo, hi); }

// What the surface labels mean where the rule-based fibres and coordinates read them.
std::string label_meaning(long long v) {
  switch (v) {
    case label_myocardium: return "  (myocardium)";
    case label_epi: return "  (epicardium)";
    case label_lv_endo: return "  (LV endocardium)";
    case label_rv_endo: return "  (RV endocardium)";
    default: return "";
  }
}

// The geometry as built: grid, tissue, its bounding box (case mm, and image mm where the
// grid came from an image), and each label's count and extent.
void describe_geometry(const SimSetup& s, std::vector<std::string>& l) {
  const TissueCase& c = s.tcase;
  const Grid& g = s.geo.grid;
  const Mask& m = s.geo.mask;
  const bool from_image = c.geometry.kind == GeometrySpec::Kind::mask_file ||
                          c.geometry.kind == GeometrySpec::Kind::phase_field_file;
  const bool from_mesh = c.geometry.kind == GeometrySpec::Kind::mesh;
  // Every kind prints the same two lines: the grid, and the tissue with its share of the box.
  l.push_back(fmt::format("  geometry  {} × {} × {} = {} voxels of {:g} × {:g} × {:g} mm{}", g.n[0], g.n[1], g.n[2],
                          g.size(), g.h[0], g.h[1], g.h[2],
                          from_image || from_mesh ? " (from " + c.geometry.path + ")" : ""));
  if (from_mesh && !s.geo.mesh_note.empty()) l.push_back("            mesh: " + s.geo.mesh_note);
  bool too_many = false;
  // No mask: every cell is tissue (and a box too large for memory is not scanned here).
  const auto tissue = m.empty() ? std::vector<io::ValueExtent>{{1, g.size(), {0, 0, 0}, {g.n[0] - 1, g.n[1] - 1, g.n[2] - 1}}}
                                : io::value_extents(
                                      g.n, [&](std::size_t i) { return m[i] != 0 ? 1LL : 0LL; },
                                      [](long long v) { return v == 1; }, 1, &too_many);
  if (tissue.empty()) {
    l.push_back("            no tissue cell");
    return;
  }
  const auto& t = tissue[0];
  l.push_back(fmt::format("            {} tissue cells ({:.1f}% of the box), {:.4g} mm³", t.count,
                          100.0 * double(t.count) / double(g.size()), double(t.count) * g.cell_volume()));
  auto faces = [&](const std::array<int, 3>& lo, const std::array<int, 3>& hi, std::array<double, 3> shift) {
    return fmt::format("x {} y {} z {} mm", mm_range(lo[0] * g.h[0] + shift[0], (hi[0] + 1) * g.h[0] + shift[0]),
                       mm_range(lo[1] * g.h[1] + shift[1], (hi[1] + 1) * g.h[1] + shift[1]),
                       mm_range(lo[2] * g.h[2] + shift[2], (hi[2] + 1) * g.h[2] + shift[2]));
  };
  l.push_back("            tissue box " + faces(t.lo, t.hi, {0, 0, 0}) + " (case coordinates: from the grid corner)");
  if (from_mesh)
    l.push_back(fmt::format("            tissue box {} (mesh coordinates, mm: grid corner at ({:g}, {:g}, {:g}))",
                            faces(t.lo, t.hi, g.origin), g.origin[0], g.origin[1], g.origin[2]));
  if (from_image) {
    // The image's own coordinates: its origin is the centre of voxel 0, so the grid corner
    // lies half an image voxel before it (resampling keeps the extent).
    try {
      const io::ImageVolume img = io::read_image(c.geometry.path);
      std::array<double, 3> shift{};
      for (int a = 0; a < 3; ++a) shift[a] = img.origin[a] - 0.5 * img.spacing[a];
      l.push_back(fmt::format("            tissue box {} (image coordinates: origin ({:g}, {:g}, {:g}) mm)",
                              faces(t.lo, t.hi, shift), img.origin[0], img.origin[1], img.origin[2]));
    } catch (const std::exception&) {
      // read once already by the geometry: nothing new to report
    }
  }
  // How the surfaces were found (an unlabelled heart) and the long axis, one line each.
  for (std::size_t a = 0, b; a < s.geo.long_axis_note.size(); a = b + 1) {
    b = s.geo.long_axis_note.find('\n', a);
    if (b == std::string::npos) b = s.geo.long_axis_note.size();
    if (b > a) l.push_back("            " + s.geo.long_axis_note.substr(a, b - a));
  }
  if (s.geo.labels.empty()) return;
  const auto labels = io::value_extents(
      g.n, [&](std::size_t i) { return is_tissue(&m, i) ? (long long)s.geo.labels[i] : -1LL; },
      [](long long v) { return v >= 0; }, 256, &too_many);
  l.push_back("            label      cells  extent (case mm)");
  for (const auto& e : labels)
    l.push_back(fmt::format("            {:>5} {:>10}  {}{}", e.value, e.count, faces(e.lo, e.hi, {0, 0, 0}),
                            label_meaning(e.value)));
}

std::string format_seconds(double s) {
  if (s < 120) return fmt::format("{:.1f} s", s);
  if (s < 7200) return fmt::format("{:.1f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

}  // namespace

CaseCheck check_case(const TissueCase& c, const CheckOptions& o) {
  CaseCheck r;
  auto& l = r.lines;
  DiagnosticSink sink;
  auto s = std::make_shared<SimSetup>(prepare_setup(c, sink));
  check_output_names(*s, sink);
  for (const Diagnostic& d : sink.all())
    if (d.severity == Severity::error) r.problems.push_back(d);
  l.push_back(fmt::format("  names     {} model{} loaded; every parameter, state and output name {}", s->models.size(), s->models.size() == 1 ? "" : "s",
                          r.problems.empty() ? "resolved" : "checked (problems below)"));
  const bool geometry_built = std::none_of(r.problems.begin(), r.problems.end(), [](const Diagnostic& d) {
    return d.code == case_code::geometry || d.code == case_code::no_file;
  });
  if (geometry_built) describe_geometry(*s, l);
  // The later stages need every model and name: a run would stop here.
  if (s->stage != SetupStage::prepared || !r.problems.empty()) return r;

  Plan p;
  try {
    p = plan(s, o.backend, o.device);  // memory, the explicit dt limit, the backend
  } catch (const InputError& e) {
    collect(e, r.problems);
    if (std::isfinite(s->stable_dt) && s->stable_dt > 0)
      l.push_back(fmt::format("  stability explicit diffusion needs dt ≤ {:.4g} ms; the case has {:g} ms", s->stable_dt,
                              c.time.dt));
    return r;
  }
  for (const auto& line : p.describe())
    if (line.find("stability") == std::string::npos) l.push_back(line);
  if (p.stable_dt > 0)
    l.push_back(fmt::format("  stability explicit diffusion needs dt ≤ {:.4g} ms; dt = {:g} ms is {:.0f}% of it "
                            "(margin ×{:.2f})",
                            p.stable_dt, c.time.dt, 100 * c.time.dt / p.stable_dt, p.stable_dt / c.time.dt));
  else
    l.push_back(fmt::format("  stability {} diffusion: no dt limit from diffusion (dt = {:g} ms)",
                            c.time.diffusion == DiffusionScheme::forward_euler ? "explicit (no tissue coupling)"
                                                                                : "implicit",
                            c.time.dt));
  // The regions, stimuli and initial conditions on the cells, as the run resolves them.
  try {
    resolve_setup(*p.setup, false);
  } catch (const InputError& e) {
    collect(e, r.problems);
    return r;
  }
  for (const Part& part : p.setup->parts)
    l.push_back(fmt::format("  region    {}: {} cells{}", part.model.substr(part.model.find_last_of('/') + 1), part.n,
                            part.how.empty() ? "" : ", " + part.how));
  if (!p.setup->integrator_note.empty()) l.push_back("  integrator " + p.setup->integrator_note);
  if (o.calibrate_seconds > 0) {
    try {
      const WallTimeEstimate w = estimate_wall_time(*p.setup, p.backend, o.threads, o.device, o.calibrate_seconds);
      l.push_back(fmt::format("  wall time ≈ {} for {:g} ms (estimated: each model stepped on a small box of the case's "
                              "dt and scheme, cost per cell-step × cells × steps; outputs and other load not included{})",
                              format_seconds(w.seconds), c.time.t_end,
                              p.backend == Backend::cuda ? "; on a GPU a rough guide: the box has neither the case's size nor its "
                                                           "stencil, and the UCSD rabbit ran 2.9× its estimate (docs/cli.md)"
                                                         : ""));
      for (const auto& b : w.basis) l.push_back("            " + b);
    } catch (const std::exception& e) {
      l.push_back(std::string("  wall time not estimated: the calibration failed: ") + e.what());
    }
  }
  return r;
}

}  // namespace hw::run
