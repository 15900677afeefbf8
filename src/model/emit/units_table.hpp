// The units definitions an XML printer (CellML 2.0, SBML) writes for a model's symbols.
//
// Why: the IR keeps each symbol's units as SI dimensions and a factor plus the name it was
// written with; CellML and SBML need a named definition for every unit that is not one of
// their predefined ones, each name an identifier and used for one definition only. A
// .hwm file's "uA/cm^2" becomes the definition "uA_per_cm2"; a name that clashes with a
// predefined unit of another meaning is prefixed "u_". Offsets (celsius) are not written:
// neither format has them, and the IR already holds every conversion as an explicit
// expression, so they only affect unit warnings.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "model/ir/model.hpp"

namespace hw::model {

class UnitsTable {
 public:
  struct Definition {
    std::string name;
    Units units;
  };

  // `predefined`: the unit names the format defines itself (and so forbids redefining).
  explicit UnitsTable(std::set<std::string> predefined) : predefined_(std::move(predefined)) {}

  // The units name to write for `s`; "" when the symbol has no units.
  std::string name_for(const Symbol& s);
  // The same for bare units written under a preferred name.
  std::string name_for(const Units& u, const std::string& preferred);

  // Definitions made so far, in order of first use.
  const std::vector<Definition>& definitions() const { return defs_; }

 private:
  std::set<std::string> predefined_;
  std::vector<Definition> defs_;
};

// The unit names CellML 2.0 and SBML Level 3 predefine.
std::set<std::string> cellml2_predefined_units();
std::set<std::string> sbml_predefined_units();

}  // namespace hw::model
