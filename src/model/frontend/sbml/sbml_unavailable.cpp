// The SBML front end of a build without libSBML: every call says what is missing.
#ifndef HW_HAVE_LIBSBML

#include "core/error.hpp"
#include "model/frontend/sbml/sbml.hpp"

namespace hw::model {

namespace {

[[noreturn]] void unavailable(const std::string& file) {
  throw InputError(SourceLoc{file, 0, 0},
                   "this is an SBML model, and Heartwave was built without libSBML: install "
                   "Debian's libsbml5-dev (bash tools/setup.sh does) and rebuild, or convert the "
                   "model to CellML elsewhere");
}

}  // namespace

Model load_sbml(const std::string& path) { unavailable(path); }
Model parse_sbml(std::string_view, const std::string& filename) { unavailable(filename); }
bool sbml_reader_available() { return false; }

}  // namespace hw::model

#endif  // HW_HAVE_LIBSBML
