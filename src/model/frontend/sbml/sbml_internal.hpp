// Internal pieces of the SBML front end: lowering libSBML's math trees to the ExprPool.
//
// Why separate: the reader decides what each SBML id is (state, parameter, algebraic);
// the math lowering only needs that answer, so it takes a name resolver and stays a
// plain tree walk that can be read against the MathML subset of SBML Level 3 Version 2.
#pragma once

#include <sbml/SBMLTypes.h>

#include <functional>
#include <map>
#include <string>

#include "core/error.hpp"
#include "model/ir/model.hpp"

// Debian builds libSBML without its C++ namespace (its classes are global, and ::Model
// would be confused with hw::model::Model); give the names we use the namespace libSBML
// has in builds that enable it, so this code reads the same with either.
#ifndef LIBSBML_USE_CPP_NAMESPACE
namespace libsbml {
using ::ASTNode;
using ::Compartment;
using ::CVTerm;
using ::FunctionDefinition;
using ::InitialAssignment;
using ::KineticLaw;
using ::ListOf;
using ::Model;
using ::Parameter;
using ::Reaction;
using ::Rule;
using ::SBase;
using ::SBMLDocument;
using ::SBMLError;
using ::Species;
using ::SpeciesReference;
using ::Unit;
using ::UnitDefinition;
using ::readSBMLFromString;
using ::UnitKind_toString;
}  // namespace libsbml
#endif
// The enumerators (AST_PLUS, BQB_IS, ...) are written unqualified: global here, and made
// visible by LIBSBML_CPP_NAMESPACE_USE in builds with the namespace.
LIBSBML_CPP_NAMESPACE_USE

namespace hw::model::sbml {

// Where a math expression sits, for messages: "<rateRule variable='V'>" at file:line.
struct MathSite {
  std::string file;
  int line = 0;
  std::string what;
};

[[noreturn]] inline void fail_at(const MathSite& site, const std::string& msg) {
  throw InputError(SourceLoc{site.file, site.line, 0}, msg + " (in " + site.what + ")");
}

// Resolves an SBML id used in math to the IR expression for its value.
using NameResolver = std::function<ExprId(const std::string& id, const MathSite& site)>;

class MathLowering {
 public:
  MathLowering(Model& m, const libsbml::Model& sm, NameResolver resolve)
      : m_(m), sm_(sm), resolve_(std::move(resolve)) {}

  ExprId lower(const libsbml::ASTNode* n, const MathSite& site);

 private:
  using Scope = std::map<std::string, ExprId>;  // a function's arguments by bvar name
  ExprId node(const libsbml::ASTNode* n, const Scope& scope, const MathSite& site, int depth);
  ExprId call(const libsbml::ASTNode* n, const Scope& scope, const MathSite& site, int depth);
  std::vector<ExprId> children(const libsbml::ASTNode* n, const Scope& scope, const MathSite& site,
                               int depth);

  Model& m_;
  const libsbml::Model& sm_;
  NameResolver resolve_;
};

}  // namespace hw::model::sbml
