// Internal types of the CellML front end: the "raw" model as read from XML (before
// connections are flattened) and the MathML syntax tree.
//
// Reading and flattening are separate so that imports can splice components of other
// files into one RawModel before any variable is classified.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "model/ir/expr.hpp"
#include "model/ir/units.hpp"

namespace hw::model::cellml {

// A MathML content expression as written (constants already folded to numbers).
struct MathNode {
  enum class Kind { number, variable, apply, diff, piecewise };
  Kind kind = Kind::number;
  double value = 0.0;              // number
  std::string name;                // variable: the ci; apply: the operator element; diff: y
  std::string bvar;                // diff: the independent variable
  std::vector<std::unique_ptr<MathNode>> args;  // apply operands; piecewise [c,v,...,other]
  std::unique_ptr<MathNode> degree;   // root
  std::unique_ptr<MathNode> logbase;  // log
  bool has_otherwise = false;         // piecewise
  int line = 0;
};

// One `<apply><eq/> lhs rhs</apply>` of a component.
struct Equation {
  std::string lhs;                 // the variable defined
  bool is_ode = false;             // lhs is d(lhs)/d(bvar)
  std::string bvar;
  std::unique_ptr<MathNode> rhs;
  int line = 0;
};

struct RawVariable {
  std::string name;
  std::string units_name;
  std::optional<Units> units;
  std::string initial;             // initial_value attribute as written ("" when absent)
  std::string public_interface, private_interface;
  std::string cmeta_id;
  std::string ontology;            // oxmeta term
  std::string file;
  int line = 0;
};

struct RawComponent {
  std::string name;
  std::vector<RawVariable> variables;
  std::vector<Equation> equations;
  std::string file;
  int line = 0;
};

struct RawConnection {
  std::string component_1, component_2;
  std::vector<std::pair<std::string, std::string>> variables;  // (in 1, in 2)
  std::string file;
  int line = 0;
};

struct RawModel {
  std::string name;
  std::string file;
  std::vector<RawComponent> components;
  std::vector<RawConnection> connections;
  std::map<std::string, std::vector<std::string>> children;  // encapsulation
  std::map<std::string, Units> units;                        // model-level definitions
};

// Parses a whole string as a finite decimal number; nullopt otherwise.
std::optional<double> parse_number(const std::string& text);

// Reads one CellML document (and, recursively, the files it imports).
// `dir` is the folder of this document, `root_dir` the folder imports may not escape
// (empty: imports rejected), `stack` the chain of files being read (cycle guard).
RawModel read_document(std::string_view xml, const std::string& filename,
                       const std::string& dir, const std::string& root_dir,
                       std::vector<std::string>& stack);

// The IR of the applied MathML operator n (n.name) over its lowered arguments a, lowering
// n's degree and log base through `lower`; kNoExpr for an operator CellML models do not use
// and the IR has not (the caller names it in its error).
ExprId apply_operator(ExprPool& pool, const MathNode& n, const std::vector<ExprId>& a,
                      const std::function<ExprId(const MathNode&)>& lower);

}  // namespace hw::model::cellml
