// The library's exceptions as Python ones, with what the C++ side knows as attributes:
// InputError carries file, line, column (of the first problem) and every diagnostic;
// NumericalError the time, cell and variable; DivergenceError the time and state.
#include <Python.h>
#include <nanobind/stl/string.h>

#include "bindings.hpp"
#include "cell/single_cell.hpp"
#include "core/error.hpp"
#include "tissue/simulation.hpp"

namespace hw::py {

namespace {

PyObject* g_error = nullptr;
PyObject* g_input = nullptr;
PyObject* g_numerical = nullptr;
PyObject* g_divergence = nullptr;

// Raises type(message) with the attributes set.
void raise(PyObject* type, const char* message, std::initializer_list<std::pair<const char*, nb::object>> attrs) {
  nb::object e = nb::steal(PyObject_CallFunction(type, "s", message));
  if (!e.is_valid()) return;  // the call raised already
  for (const auto& [k, v] : attrs) nb::setattr(e, k, v);
  PyErr_SetObject(type, e.ptr());
}

}  // namespace

void bind_errors(nb::module_& m) {
  g_error = PyErr_NewExceptionWithDoc("heartwave.HeartwaveError",
                                      "A failure of Heartwave or of a request it cannot meet.", PyExc_RuntimeError,
                                      nullptr);
  g_input = PyErr_NewExceptionWithDoc(
      "heartwave.InputError",
      "A problem in user input (model file, case, arguments): .file, .line, .column locate the "
      "first problem; .diagnostics lists every one as (severity, file, line, column, message, code).",
      g_error, nullptr);
  g_numerical = PyErr_NewExceptionWithDoc(
      "heartwave.NumericalError",
      "A tissue step produced a value that is not finite: .time (ms), .cell (i, j, k), .variable. "
      "The simulation keeps its last good state.",
      g_error, nullptr);
  g_divergence = PyErr_NewExceptionWithDoc(
      "heartwave.DivergenceError",
      "A single-cell run diverged: .time (ms) and .state (the state that went first).", g_error, nullptr);
  m.attr("HeartwaveError") = nb::borrow(g_error);
  m.attr("InputError") = nb::borrow(g_input);
  m.attr("NumericalError") = nb::borrow(g_numerical);
  m.attr("DivergenceError") = nb::borrow(g_divergence);

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const InputError& e) {
      nb::list diags;
      for (const auto& d : e.diagnostics())
        diags.append(nb::make_tuple(d.severity == Severity::error ? "error"
                                    : d.severity == Severity::warning ? "warning" : "note",
                                    d.loc.file, d.loc.line, d.loc.col, d.message, d.code));
      const SourceLoc loc = e.diagnostics().empty() ? SourceLoc{} : e.diagnostics().front().loc;
      raise(g_input, e.what(),
            {{"file", nb::str(loc.file.c_str())}, {"line", nb::int_(loc.line)}, {"column", nb::int_(loc.col)},
             {"diagnostics", diags}});
    } catch (const tissue::NumericalError& e) {
      raise(g_numerical, e.what(),
            {{"time", nb::float_(e.time)},
             {"cell", nb::make_tuple(e.cell[0], e.cell[1], e.cell[2])},
             {"variable", nb::str(e.variable.c_str())}});
    } catch (const cell::DivergenceError& e) {
      raise(g_divergence, e.what(), {{"time", nb::float_(e.time_ms)}, {"state", nb::str(e.state.c_str())}});
    } catch (const Error& e) {
      PyErr_SetString(g_error, e.what());
    }
  });
}

}  // namespace hw::py
