// CellML 1.0 / 1.1 / 2.0 front end: reads a CellML file into a flat Model.
//
// What it guarantees (docs/cellml.md has the supported subset and naming rules):
//  - every connected set of CellML variables becomes one Model symbol, named after the
//    variable that defines it (its own name when unique, else component + "__" + name);
//  - variables connected across different but compatible units become algebraics
//    (source * factor + offset); incompatible dimensions are an InputError;
//  - XML is read with no network access, no DTD loading and no entity expansion;
//    1.1 imports resolve to local files under the base folder only;
//  - any problem in the input is an hw::InputError located at file:line; malformed
//    input never crashes.
#pragma once

#include <string>
#include <string_view>

#include "model/ir/model.hpp"

namespace hw::model {

// Reads and flattens the CellML file at `path`; imports resolve relative to its folder.
Model load_cellml(const std::string& path);

// Parses CellML text. `filename` is used in messages and as Model::source_file; imports
// resolve relative to `base_dir` and may not escape it (empty base_dir: imports are an
// error).
Model parse_cellml(std::string_view xml, const std::string& filename,
                   const std::string& base_dir = "");

}  // namespace hw::model
