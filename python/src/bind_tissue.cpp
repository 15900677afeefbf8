// Tissue: cases (a TOML file or text, validated as `heartwave run` does), a Simulation to
// step and look into from Python, and the Run that writes a case's outputs. Stepping
// releases the GIL.
#include <nanobind/stl/array.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fstream>
#include <optional>
#include <sstream>

#include <chrono>

#include <fmt/format.h>

#include "bindings.hpp"
#include "live/hub.hpp"
#include "live/server.hpp"
#include "live/session.hpp"
#include "run/case_file.hpp"
#include "run/output_folder.hpp"
#include "outputs/checkpoint.hpp"
#include "outputs/maps.hpp"
#include "outputs/probes.hpp"
#include "run/run.hpp"
#include "tissue/engine.hpp"
#include "tissue/simulation.hpp"

namespace hw::py {

namespace {

// A case with the text it came from (a run's checkpoints are tied to that text).
struct Case {
  tissue::TissueCase c;
  std::string text;
  std::vector<std::string> overrides;
};

Case case_from_text(const std::string& text, const std::string& filename, const std::vector<std::string>& sets) {
  return Case{io::parse_case(text, filename, sets), text, sets};
}

Case case_from_file(const std::string& path, const std::vector<std::string>& sets) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLoc{path, 0, 0}, "cannot open the case file (does it exist?)");
  std::ostringstream s;
  s << in.rdbuf();
  return Case{io::read_case_file(path, sets), s.str(), sets};
}

nb::ndarray<nb::numpy, float> field_array(tissue::Field<float>&& f) {
  const std::size_t n = f.size();
  return to_numpy(std::move(f.vec()), {n});
}

// A simulation with what a Python user follows while it steps: activation/APD maps and
// probes (voltage traces at points).
class PySimulation {
 public:
  PySimulation(const Case& c, const std::string& backend, int threads) : case_(c.c) {
    opt_.backend = tissue::choose_backend(backend, &note_);
    opt_.threads = threads;
    sim_ = std::make_unique<tissue::Simulation>(case_, opt_);
  }

  // The live view of this simulation (docs/live.md): served from its current state until
  // `seconds` pass or Ctrl-C, then this simulation continues from where the view left it.
  // on_ready(url) runs once the page is served. The controls are logged to `log` ("": none).
  nb::dict live(const std::string& host, int port, double fps, std::optional<double> seconds, bool paused,
                const std::string& log, const std::function<void(const std::string&)>& on_ready) {
    live::LiveOptions o;
    o.sim = opt_;
    o.fps = fps;
    o.start_paused = paused;
    o.log_path = log;
    o.case_label = case_.source_file.empty() ? "<python case>" : case_.source_file;
    o.start_state = sim_->save_state();
    live::Hub hub;
    std::unique_ptr<live::LiveRun> run;
    std::unique_ptr<live::Server> server;
    {
      nb::gil_scoped_release free;
      run = std::make_unique<live::LiveRun>(case_, o, &hub);
      server = std::make_unique<live::Server>(hub, live::ServerOptions{host, port, ""});
    }
    const std::string url = server->url();
    if (on_ready) on_ready(url);
    else nb::print(nb::str(fmt::format("live: open {}  (Ctrl-C or the seconds given end it)", url).c_str()));
    const auto end = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(seconds.value_or(1e12)));
    bool interrupted = false;
    {
      nb::gil_scoped_release free;
      run->serve([&] {
        if (std::chrono::steady_clock::now() >= end) return true;
        nb::gil_scoped_acquire hold;
        if (PyErr_CheckSignals() != 0) {
          PyErr_Clear();
          interrupted = true;
        }
        return interrupted;
      });
      server.reset();  // no page waits on a run that is going (serve ended the log)
      sim_->load_state(run->simulation().save_state());
    }
    if (interrupted) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw nb::python_error();
    }
    nb::dict d;
    d["url"] = url;
    d["time"] = sim_->time();
    d["steps"] = sim_->steps_done();
    return d;
  }

  void track_activation(double threshold, bool apd) {
    const tissue::Mask* m = &sim_->mask();
    tracker_.emplace(sim_->grid(), m, threshold, apd);
    tissue::Field<float> v;
    sim_->voltage(v);
    tracker_->update(sim_->time(), v);
    tracker_->attach(*sim_);
  }

  std::size_t add_probe(const std::array<double, 3>& position, const std::string& name) {
    const std::size_t cell = io::nearest_tissue_cell(sim_->grid(), &sim_->mask(), position, "probe '" + name + "'");
    probe_cells_.push_back(cell);
    probe_values_.clear();
    probe_times_.clear();
    return cell;
  }

  // Advances n steps; with maps followed on the host or probes, V is sampled after each.
  void advance(long n) {
    const bool sample = (tracker_ && !tracker_->attached()) || !probe_cells_.empty();
    if (!sample) {
      sim_->run_until(sim_->time() + (double(n) - 0.5) * sim_->dt());
      return;
    }
    tissue::Field<float> v;
    for (long s = 0; s < n; ++s) {
      sim_->step();
      if (tracker_ && !tracker_->attached()) {
        sim_->voltage(v);
        tracker_->update(sim_->time(), v);
      }
      if (!probe_cells_.empty()) {
        probe_times_.push_back(sim_->time());
        for (std::size_t c : probe_cells_) probe_values_.push_back(sim_->voltage_at(c));
      }
    }
  }

  tissue::Simulation& sim() { return *sim_; }
  const std::string& note() const { return note_; }
  std::optional<io::ActivationTracker>& tracker() { return tracker_; }
  std::size_t probes() const { return probe_cells_.size(); }
  const std::vector<double>& probe_times() const { return probe_times_; }
  const std::vector<double>& probe_values() const { return probe_values_; }

 private:
  tissue::TissueCase case_;
  tissue::SimulationOptions opt_;
  std::string note_;
  std::unique_ptr<tissue::Simulation> sim_;
  std::optional<io::ActivationTracker> tracker_;
  std::vector<std::size_t> probe_cells_;
  std::vector<double> probe_times_, probe_values_;
};

nb::tuple shape(const tissue::Grid& g) { return nb::make_tuple(g.n[2], g.n[1], g.n[0]); }

// A run of a case with its outputs, checkpoints and NaN policy (run/run.hpp).
class PyRun {
 public:
  PyRun(const Case& c, const std::string& backend, int threads, const std::string& restart, bool overwrite) {
    // The output folder first, as `heartwave run` checks it: another run's outputs there are
    // refused unless overwrite or this is a restart of that run.
    const std::string run_id = restart.empty() ? "" : io::read_checkpoint_origin(restart).origin.run_id;
    run::check_output_folder(c.c.output.directory, c.c.output.loc,
                             {overwrite, run_id, restart, run::FolderIntent::Caller::python});
    const run::Plan plan = run::plan(c.c, backend);
    plan_ = plan.describe();
    run::Options o;
    o.sim.backend = plan.backend;
    o.sim.threads = threads;
    o.restart = restart;
    o.identity = run::case_identity(c.text, c.overrides);
    o.setup = plan.setup;  // the plan's set-up, not done again
    o.overwrite = overwrite;
    run_ = std::make_unique<run::Run>(c.c, o);
  }

  nb::dict advance(double t_end, const std::function<void(double)>& progress, double report_every_ms) {
    run::Result r;
    {
      nb::gil_scoped_release release;
      double next = 0;
      r = run_->advance(t_end, [&](double t) {
        if (!progress || t < next) return;
        next = t + report_every_ms;
        nb::gil_scoped_acquire acquire;
        progress(t);
      });
    }
    nb::dict d;
    d["outcome"] = r.outcome == run::Result::Outcome::finished  ? "finished"
                   : r.outcome == run::Result::Outcome::stopped ? "stopped"
                                                                : "failed";
    d["time"] = r.t_ms;
    d["checkpoint"] = r.checkpoint;
    d["summary"] = r.summary;
    d["signal"] = r.signal;
    d["failed_at"] = r.failed_at_ms;
    d["cell"] = nb::make_tuple(r.cell[0], r.cell[1], r.cell[2]);
    d["variable"] = r.variable;
    d["message"] = r.message;
    d["last_good"] = r.last_good;
    return d;
  }

  const tissue::Simulation& sim() const { return run_->simulation(); }
  std::vector<std::string> notes() const {
    std::vector<std::string> n = plan_;
    for (const auto& l : run_->notes()) n.push_back(l);
    return n;
  }

 private:
  std::vector<std::string> plan_;
  std::unique_ptr<run::Run> run_;
};

}  // namespace

void bind_tissue(nb::module_& m) {
  nb::class_<Case>(m, "Case")
      .def_static("from_file", &case_from_file, nb::arg("path"), nb::arg("overrides") = std::vector<std::string>{})
      .def_static("from_text", &case_from_text, nb::arg("text"), nb::arg("filename"),
                  nb::arg("overrides") = std::vector<std::string>{})
      .def_prop_ro("text", [](const Case& c) { return c.text; })
      .def_prop_ro("name", [](const Case& c) { return c.c.name; })
      .def_prop_ro("dt", [](const Case& c) { return c.c.time.dt; })
      .def_prop_ro("t_end", [](const Case& c) { return c.c.time.t_end; })
      .def_prop_ro("output_directory", [](const Case& c) { return c.c.output.directory; })
      .def("describe", [](const Case& c) { return io::describe_case(c.c); });

  nb::class_<PySimulation>(m, "Simulation")
      .def(nb::init<const Case&, const std::string&, int>(), nb::arg("case"), nb::arg("backend") = "auto",
           nb::arg("threads") = 0, nb::call_guard<nb::gil_scoped_release>())
      .def("advance", &PySimulation::advance, nb::arg("steps"), nb::call_guard<nb::gil_scoped_release>())
      .def("live", &PySimulation::live, nb::arg("host"), nb::arg("port"), nb::arg("fps"), nb::arg("seconds").none(),
           nb::arg("paused"), nb::arg("log"), nb::arg("on_ready").none())
      .def("track_activation", &PySimulation::track_activation, nb::arg("threshold"), nb::arg("apd"))
      .def("add_probe", &PySimulation::add_probe, nb::arg("position"), nb::arg("name"))
      .def("stimulate",
           [](PySimulation& s, std::array<double, 3> lo, std::array<double, 3> hi, double amplitude, double start,
              double duration, double period, int count) {
             tissue::Stimulus st;
             st.where.kind = tissue::Region::Kind::box;
             st.where.lo = lo;
             st.where.hi = hi;
             st.amplitude = amplitude;
             st.start = start;
             st.duration = duration;
             st.period = period;
             st.count = count;
             s.sim().add_stimulus(st);
           },
           nb::arg("lo"), nb::arg("hi"), nb::arg("amplitude"), nb::arg("start"), nb::arg("duration"),
           nb::arg("period"), nb::arg("count"))
      .def_prop_ro("backend_note", &PySimulation::note)
      .def_prop_ro("time", [](PySimulation& s) { return s.sim().time(); })
      .def_prop_ro("steps", [](PySimulation& s) { return s.sim().steps_done(); })
      .def_prop_ro("dt", [](PySimulation& s) { return s.sim().dt(); })
      .def_prop_ro("shape", [](PySimulation& s) { return shape(s.sim().grid()); })
      .def_prop_ro("spacing", [](PySimulation& s) {
        const auto& h = s.sim().grid().h;
        return nb::make_tuple(h[2], h[1], h[0]);
      })
      .def_prop_ro("tissue_cells", [](PySimulation& s) { return s.sim().tissue_cells(); })
      .def("describe", [](PySimulation& s) { return s.sim().describe(); })
      .def("mask",
           [](PySimulation& s) {
             std::vector<std::uint8_t> m = s.sim().mask().vec();
             if (m.empty()) m.assign(s.sim().grid().size(), 1);
             const std::size_t n = m.size();
             return to_numpy(std::move(m), {n});
           })
      .def("field",
           [](PySimulation& s, const std::string& name) {
             tissue::Field<float> f;
             {
               nb::gil_scoped_release release;
               if (!s.sim().field(name, f))
                 throw InputError(SourceLoc{}, "no model region of this case has a state '" + name +
                                                   "' (\"V\" is the voltage)");
             }
             return field_array(std::move(f));
           })
      .def("set_field",
           [](PySimulation& s, const std::string& name, const DoubleArray& values) {
             std::vector<double> v = to_vector(values);
             nb::gil_scoped_release release;
             if (!s.sim().set_field(name, v))
               throw InputError(SourceLoc{}, "no model region of this case has a state '" + name +
                                                 "' (\"V\" is the voltage)");
           })
      .def("activation",
           [](PySimulation& s) {
             if (!s.tracker()) throw InputError(SourceLoc{}, "activation maps are not followed: call track_activation() first");
             tissue::Field<float> f = s.tracker()->activation();
             return field_array(std::move(f));
           })
      .def("apd90",
           [](PySimulation& s) {
             if (!s.tracker() || s.tracker()->apd90().empty())
               throw InputError(SourceLoc{}, "APD90 maps are not followed: call track_activation(apd=True) first");
             tissue::Field<float> f = s.tracker()->apd90();
             return field_array(std::move(f));
           })
      .def("probe_data",
           [](PySimulation& s) {
             std::vector<double> t = s.probe_times(), v = s.probe_values();
             const std::size_t n = t.size(), k = s.probes();
             return nb::make_tuple(to_numpy(std::move(t), {n}), to_numpy(std::move(v), {n, k}));
           })
      .def("save_state",
           [](PySimulation& s) {
             const std::vector<std::uint8_t> b = s.sim().save_state();
             return nb::bytes(reinterpret_cast<const char*>(b.data()), b.size());
           })
      .def("load_state", [](PySimulation& s, const nb::bytes& b) {
        const auto* p = static_cast<const std::uint8_t*>(b.data());
        s.sim().load_state(std::vector<std::uint8_t>(p, p + b.size()));
      });

  nb::class_<PyRun>(m, "Run")
      .def(nb::init<const Case&, const std::string&, int, const std::string&, bool>(), nb::arg("case"),
           nb::arg("backend") = "auto", nb::arg("threads") = 0, nb::arg("restart") = "", nb::arg("overwrite") = false,
           nb::call_guard<nb::gil_scoped_release>())
      .def("advance", &PyRun::advance, nb::arg("t_end"), nb::arg("progress").none() = nb::none(),
           nb::arg("report_every_ms") = 1.0)
      .def_prop_ro("notes", &PyRun::notes)
      .def_prop_ro("time", [](const PyRun& r) { return r.sim().time(); })
      .def("describe", [](const PyRun& r) { return r.sim().describe(); })
      .def("field", [](const PyRun& r, const std::string& name) {
        tissue::Field<float> f;
        if (!r.sim().field(name, f))
          throw InputError(SourceLoc{}, "no model region of this case has a state '" + name + "'");
        return field_array(std::move(f));
      });
}

}  // namespace hw::py
