// Models: loading (a file or a built-in), what the compiler found in them, and printing.
#include <filesystem>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "device/embedded.hpp"
#include "model/emit/cpp_printer.hpp"
#include "model/emit/cuda_printer.hpp"
#include "model/frontend/hwm/hwm.hpp"
#include "model/analysis/roles.hpp"
#include "model/load.hpp"

namespace hw::py {

// Role overrides from a Python dict of role name → variable name.
model::RoleOverrides role_overrides(const nb::dict& roles) {
  model::RoleOverrides o;
  for (auto [k, v] : roles) {
    const std::string key = nb::cast<std::string>(k), value = nb::cast<std::string>(v);
    if (key == "voltage") o.voltage = value;
    else if (key == "stimulus_current") o.stimulus_current = value;
    else if (key == "stimulus_amplitude") o.stimulus_amplitude = value;
    else if (key == "stimulus_duration") o.stimulus_duration = value;
    else if (key == "stimulus_period") o.stimulus_period = value;
    else if (key == "stimulus_start") o.stimulus_start = value;
    else if (key == "calcium") o.calcium = value;
    else if (key == "capacitance") o.capacitance = value;
    else
      throw InputError(SourceLoc{}, "unknown role '" + key +
                                        "': expected voltage, stimulus_current, stimulus_amplitude, "
                                        "stimulus_duration, stimulus_period, stimulus_start, calcium or capacitance");
  }
  return o;
}

namespace {

nb::dict symbol(const model::Symbol& s) {
  nb::dict d;
  d["name"] = s.name;
  d["units"] = s.units_name;
  d["component"] = s.component;
  d["description"] = s.description;
  return d;
}

}  // namespace

void bind_model(nb::module_& m) {
  m.def("builtin_models", &model::builtin_model_names, "The names of the built-in models.");

  nb::class_<model::LoadedModel>(m, "LoadedModel")
      .def_static(
          "load",
          [](const std::string& path, const nb::dict& roles) {
            model::LoadOptions o;
            o.roles = role_overrides(roles);
            return model::load_model(path, o);
          },
          nb::arg("path"), nb::arg("roles") = nb::dict(), nb::call_guard<nb::gil_scoped_release>())
      .def_prop_ro("name", [](const model::LoadedModel& l) { return l.source.name; })
      .def_prop_ro("source_file", [](const model::LoadedModel& l) { return l.source.source_file; })
      .def_prop_ro("builtin", [](const model::LoadedModel& l) { return l.builtin; })
      .def_prop_ro("states",
                   [](const model::LoadedModel& l) {
                     nb::list out;
                     const auto& an = l.analysed;
                     for (std::size_t i = 0; i < l.source.states.size(); ++i) {
                       nb::dict d = symbol(l.source.states[i]);
                       d["initial"] = l.source.states[i].initial;
                       d["gate"] = i < an.analysis.size() && an.analysis[i].is_gate;
                       out.append(d);
                     }
                     return out;
                   })
      .def_prop_ro("parameters",
                   [](const model::LoadedModel& l) {
                     nb::list out;
                     for (const auto& p : l.source.parameters) {
                       nb::dict d = symbol(p);
                       d["value"] = p.value;
                       out.append(d);
                     }
                     return out;
                   })
      .def_prop_ro("algebraics",
                   [](const model::LoadedModel& l) {
                     nb::list out;
                     for (const auto& a : l.source.algebraics) out.append(symbol(a));
                     return out;
                   })
      .def_prop_ro("repairs",
                   [](const model::LoadedModel& l) {
                     nb::list out;
                     for (const auto& r : l.analysed.repairs) {
                       nb::dict d;
                       d["where"] = r.where;
                       d["variable"] = r.variable;
                       d["point"] = r.point;
                       d["half_width"] = r.half_width;
                       d["method"] = r.method;
                       out.append(d);
                     }
                     return out;
                   })
      .def_prop_ro("linear_blocks",
                   [](const model::LoadedModel& l) {
                     nb::list out;
                     for (const auto& b : l.analysed.blocks) {
                       nb::list names;
                       for (auto i : b.states) names.append(l.analysed.states[i].name);
                       out.append(names);
                     }
                     return out;
                   })
      .def_prop_ro("roles", [](const model::LoadedModel& l) { return model::describe_roles(l.source); })
      .def_prop_ro("warnings",
                   [](const model::LoadedModel& l) {
                     std::vector<std::string> out;
                     for (const auto& d : l.notes)
                       if (d.severity != Severity::note) out.push_back(d.str());
                     return out;
                   })
      .def("print_cpp", [](const model::LoadedModel& l) { return model::print_cpp(l.analysed); })
      .def("print_cuda",
           [](const model::LoadedModel& l) { return gpu::inline_embedded_includes(model::print_cuda(l.analysed)); })
      .def("print_hwm", [](const model::LoadedModel& l) { return model::write_hwm(l.source); });
}

}  // namespace hw::py
