// The model IR: one cell model as symbols plus equations over an ExprPool.
//
// The Model is the single source of truth that every printer reads (DESIGN.md §2). Front
// ends (CellML, .hwm) build it; passes transform it (see model/passes/pipeline.hpp);
// printers (C++, CUDA, .hwm, interpreter bytecode) read it.
//
// Symbols:
//   time        — the free variable (in the model's own time units)
//   states      — y_i with initial values; derivatives[i] is the expression for dy_i/dt
//   parameters  — constants that a run may override (globally or per cell)
//   algebraics  — named intermediate variables, defined by an expression over time,
//                 states, parameters and other algebraics (ordered by the dependency pass)
//
// Roles tie symbols to the physiology the CLI needs (membrane voltage, stimulus current,
// calcium) and are found from metadata or name rules (model/analysis/roles.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "model/ir/expr.hpp"
#include "model/ir/units.hpp"

namespace hw::model {

struct Symbol {
  std::string name;         // unique within its kind and across kinds in a Model
  std::string units_name;   // as written in the source ("millivolt", "mV"); may be empty
  std::optional<Units> units;
  std::string component;    // CellML component (or "" for .hwm)
  std::string description;  // free text, e.g. from a comment or metadata
  std::string ontology;     // metadata term, e.g. "membrane_voltage" (oxmeta)
  SourceLoc loc;
};

struct State : Symbol {
  double initial = 0.0;
};

struct Parameter : Symbol {
  double value = 0.0;
};

struct Algebraic : Symbol {
  ExprId expr = kNoExpr;
  // Depends on parameters and constants only: evaluated once per cell (a "computed
  // constant"), not every step. Set by the classification pass.
  bool once_per_cell = false;
  // Introduced by a pass (CSE temporaries, repairs), not written by the modeller.
  bool synthetic = false;
  // Computed in double even by a kernel that steps in float: in float it loses every digit
  // somewhere the model goes and a derivative turns non-finite (passes/widen_for_float).
  bool wide = false;
};

// What each state's ODE looks like, filled by passes (gates, jacobian).
struct StateAnalysis {
  bool is_gate = false;          // dy/dt = a - b*y with a, b independent of y
  ExprId jacobian_diag = kNoExpr;  // symbolic d(dy_i/dt)/dy_i
  int block = -1;                  // index in Model::blocks, or -1
};

// States whose derivatives are affine in the block's own states: dy_B/dt = A·y_B + b, with
// A and b free of every y_B (they may read V and other states). Markov chains of channel
// gating are the common case. The stiff integrators (GRL1, GRL2) advance a block by an
// implicit update of this small dense system instead of a diagonal one.
struct LinearBlock {
  std::vector<std::uint32_t> states;  // state indices, ascending
  std::vector<ExprId> jacobian;       // A row-major: ∂f(states[r])/∂y(states[c])
  bool conserves = false;  // Σ dy/dt over the block is identically 0 (occupancy conserved)
};

// A repaired removable singularity (filled by the singularity pass, for reporting).
struct SingularityRepair {
  std::string where;        // the algebraic (or "d/dt y") that held the expression
  std::string variable;     // the variable it is singular in (usually the voltage)
  double point = 0.0;       // where numerator and denominator vanish together
  double half_width = 0.0;  // the window replaced by the repair
  std::string method;       // "taylor" or "linear interpolation"
};

struct Roles {
  std::optional<std::uint32_t> voltage_state;      // membrane potential
  std::optional<std::uint32_t> stimulus_current;   // algebraic index of i_stim
  std::optional<std::uint32_t> stimulus_amplitude;  // parameter index
  std::optional<std::uint32_t> stimulus_duration;   // parameter index
  std::optional<std::uint32_t> stimulus_period;     // parameter index
  std::optional<std::uint32_t> stimulus_start;      // parameter index
  std::optional<std::uint32_t> calcium_state;       // intracellular Ca (cytosolic)
  std::optional<std::uint32_t> capacitance;         // parameter index of Cm
  // Multipliers from the model's units to the CLI's (ms, mV); 1 when already so or
  // when the model is dimensionless.
  double time_to_ms = 1.0;
  double voltage_to_mV = 1.0;
};

struct Model {
  std::string name;
  std::string source_file;
  std::string citation;      // the publication, when known
  std::string documentation;

  ExprPool pool;
  Symbol time;
  std::vector<State> states;
  std::vector<ExprId> derivatives;  // one per state, same order
  std::vector<Parameter> parameters;
  std::vector<Algebraic> algebraics;
  Roles roles;

  std::vector<StateAnalysis> analysis;       // one per state once analysed
  std::vector<LinearBlock> blocks;           // filled with analysis
  // Distances g = lhs − rhs of the comparisons on states that a step must not step over
  // (model/passes/thresholds.hpp); filled with analysis.
  std::vector<ExprId> thresholds;
  std::vector<SingularityRepair> repairs;   // filled by the singularity pass

  // Lookups by name; nullopt when absent.
  std::optional<std::uint32_t> find_state(const std::string& name) const;
  std::optional<std::uint32_t> find_parameter(const std::string& name) const;
  std::optional<std::uint32_t> find_algebraic(const std::string& name) const;

  // The name of a variable node (time, state, parameter or algebraic).
  const std::string& variable_name(VarKind kind, std::uint32_t index) const;
  const Symbol& symbol(VarKind kind, std::uint32_t index) const;
};

}  // namespace hw::model
