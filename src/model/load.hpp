// One call from a file name (or a built-in model's name) to a model ready to run.
//
// Why: every command of the CLI, the tests and the benchmarks need the same sequence —
// read (CellML or .hwm, chosen by extension; or the built-in library by name), find the
// roles, check units (warnings), hand the stimulus to the pacing driver (cell/pacing.hpp)
// and run the pass pipeline — and must all see the same model. The model as read (before
// pacing and passes) is kept for `model convert` and `model inspect`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/passes/pacing.hpp"
#include "core/error.hpp"
#include "model/analysis/roles.hpp"
#include "model/ir/model.hpp"
#include "model/passes/pipeline.hpp"

namespace hw::model {

struct LoadOptions {
  RoleOverrides roles;
  PipelineOptions pipeline;
  // Keep the model's own stimulus protocol (no pacing control; --bcl etc. only set the
  // beat boundaries used for biomarkers).
  bool keep_model_stimulus = false;
};

struct LoadedModel {
  Model source;    // as read, with roles
  Model analysed;  // pacing prepared, passes run: what kernels are built from
  std::vector<Diagnostic> notes;  // warnings and notes from units and passes
  StimulusInfo stimulus;
  std::string builtin;  // the built-in's name when loaded by name, else ""
};

// The reader a model file needs: .hwm by extension; .cellml, .sbml and .xml by the XML
// root element (<model>: CellML, <sbml>: SBML). Another extension is an InputError.
enum class ModelFormat { cellml, sbml, hwm };
ModelFormat model_format_of(const std::string& path);

// The local name of the first element of an XML text ("" when there is none).
std::string xml_root_name(std::string_view text);

// The model in a file, as read (CellML, SBML or .hwm; see model_format_of).
Model read_model_file(const std::string& path);

// `path_or_builtin`: a .cellml/.sbml/.xml/.hwm file, or the name of a built-in model. An
// unknown name or extension is an InputError that lists the built-in models.
LoadedModel load_model(const std::string& path_or_builtin, const LoadOptions& opt = {});

// The names of the built-in models (registry and the repository's models/ folder).
std::vector<std::string> builtin_model_names();

}  // namespace hw::model
