// The expression printer shared by the C++ and CUDA back ends.
//
// One printer core, one profile per target (libCellML's generator profiles): the profile
// says how a real is spelled ("Real" for the C++ template, float or double for CUDA),
// which function names to call (std::exp, expf, exp, __expf) and how literals look, so
// both targets print the same statements from the same analysed Model.
//
// Guarantees:
//   - Printers never simplify the model's maths; the only rewrites are the strength
//     reductions below, each either exact or within an ulp or two of the libm call:
//       pow(x, n) for integer |n| <= 64  -> repeated squaring (powi<n>(x)), x^0 -> 1
//       pow(x, 0.5)                      -> sqrt(x)
//       x / c for c = ±2^k               -> x * (1/c)   (exact: the reciprocal is exact)
//     Other divisions by constants stay divisions (x/3 and x*(1/3) differ in the last bit).
//   - Evaluation order is the IR's: operands keep their association (a + (b + c) keeps its
//     parentheses), so generated code agrees with the interpreter to rounding.
//   - A node used more than once in a function becomes one `const` temporary, emitted
//     before its first use, so printed code is linear in the size of the DAG.
//   - Op::piecewise is refused (hw::Error): the pipeline lowers it to select.
//   - Model names never appear unsanitised (see identifiers.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/ir/model.hpp"

namespace hw::model {

struct TargetProfile {
  std::string real = "Real";    // the spelling of the floating-point type
  bool cuda = false;            // C function names (expf/exp) instead of std:: overloads
  bool use_float = false;       // CUDA: float names (expf) and literals (1.5f)
  // Fast intrinsics (cell_maths "fast"): CUDA float prints __expf, __logf, __log10f, __powf
  // and __fdividef; C++ prints hw_fast_* (kFastMath of cpp_printer.cpp), which evaluate the
  // same approximations in float and the exact maths in double.
  bool fast_intrinsics = false;
  std::string powi = "powi";    // name of the integer-power helper template
  // pow(x, p) with a parameter p as exponent: the helper that tests p for a small integer
  // once per batch (C++: pow_param); empty prints pow.
  std::string pow_param;
  // Branch-free printing (C++): non-trivial select arms become temporaries computed before
  // the select, and && / || become & / |, so both sides are always evaluated and a loop over
  // cells that inlines the model has no control flow left for the vectoriser to reject.
  // The values are unchanged (the model is pure; an unused arm may be inf or NaN).
  bool branch_free = false;
  // Lookup tables (model/passes/tabulate.hpp): the nodes they tabulate print as a lookup in
  // <table_prefix>_lut<group> (print_tables defines them) instead of their maths. Not in
  // values computed in double in a float kernel (Algebraic::wide).
  const struct Tabulation* tables = nullptr;
  std::string table_prefix = "hw";

  std::string literal(double v) const;
  std::string function(Op op) const;
  // The function that divides (fast intrinsics), or empty for the operator /.
  std::string fast_division() const;
  // The profile of a value computed in double whatever the kernel's precision
  // (Algebraic::wide): double literals and functions, no fast intrinsics.
  TargetProfile widened() const;
};

// The strength reductions above, shared with the operation count (op_count.hpp):
// the exponent of pow(x, n) that is printed as powi<n> (a constant integer, |n| <= 64) ...
std::optional<int> small_integer_exponent(const ExprPool& pool, ExprId e);
// ... and a divisor ±2^k whose division is printed as a multiplication by its reciprocal.
bool exact_reciprocal(double v);

TargetProfile cpp_profile(bool fast_intrinsics = false);
TargetProfile cuda_profile(bool use_float, bool fast_intrinsics, std::string powi_name);

// How the function being printed names a variable node (y[3], p[0], c[2], a5_i_Na, t).
using VarNamer = std::function<std::string(VarKind, std::uint32_t)>;

// One line of straight-line code: `lhs = expr;`. When expr is kNoExpr, `rhs_text` is
// printed instead (used to copy already-named values); with an empty lhs too, rhs_text is
// printed as it is (whole lines, indented by whoever made them).
struct Assignment {
  std::string lhs;
  ExprId expr = kNoExpr;
  std::string rhs_text;
  std::string comment;  // already sanitised; printed as a trailing // comment
  // Computed in double from double operands (Algebraic::wide), whatever the kernel's Real.
  bool wide = false;
};

std::string print_straight_line(const Model& m, const TargetProfile& prof,
                                const std::vector<Assignment>& stmts, const VarNamer& names,
                                std::string_view indent);

// Where each symbol lives in generated code; checks the Model is analysed and lowered.
struct CodeLayout {
  std::vector<int> constant_index;      // per algebraic: index into c[], or -1 (every step)
  std::vector<std::string> local_name;  // per algebraic: generated local name (a<k>_<name>)
  int n_constants = 0;
};
CodeLayout make_layout(const Model& m);

// The statement lists both printers use (see runtime/integrators.hpp for the concept):
//   constants(p, c):              once-per-cell algebraics into c[]
//   rhs / rhs_jac(t, y, p, c, …): every-step algebraics as locals, then dydt[], jdiag[]
//   algebraics(t, y, p, c, out):  every-step algebraics, then out[k] for every algebraic
std::vector<Assignment> constants_statements(const Model& m, const CodeLayout& l,
                                             const TargetProfile& prof);
std::vector<Assignment> rhs_statements(const Model& m, const CodeLayout& l,
                                       const TargetProfile& prof, bool with_jacobian);
std::vector<Assignment> algebraics_statements(const Model& m, const CodeLayout& l,
                                              const TargetProfile& prof);
// The local definition of every-step algebraic k (`const Real a<k>_<name> = …`).
Assignment every_step_algebraic(const Model& m, const CodeLayout& l, const TargetProfile& prof,
                                std::size_t k);
//   rhs_jac_blocks(t, y, p, c, dydt, jdiag, A): rhs_jac, then each linear block's Jacobian
//                                 into A[] (row-major, blocks one after another)
std::vector<Assignment> rhs_blocks_statements(const Model& m, const CodeLayout& l,
                                              const TargetProfile& prof);
//   thresholds(t, y, p, c, g):    the every-step algebraics they read, then g[k] for each
//                                 of m.thresholds (model/passes/thresholds.hpp)
std::vector<Assignment> threshold_statements(const Model& m, const CodeLayout& l,
                                             const TargetProfile& prof);
// Σ n_b² over m.blocks: the size of A[].
int block_entries(const Model& m);
// The block structure members of the integrators' model concept (kBlockEntries, n_blocks,
// block_size, block_offset, block_state, block_of) as constexpr switches that fold away
// once step_cell's loops are unrolled; `qualifier` precedes each function ("__device__ ",
// or "" for C++), `indent` each line.
std::string block_structure(const Model& m, const std::string& qualifier, const std::string& indent);
VarNamer namer_for(const Model& m, const CodeLayout& l);

// The arrays of a Tabulation as `qualifier <type> <table_prefix>_lut<g>[] = {...};`, in the
// profile's precision (the C++ template's Real: double, converted on load).
std::string print_tables(const struct Tabulation& t, const TargetProfile& prof, const std::string& qualifier);

// A short header comment naming the model and what each array index holds.
std::string layout_comment(const Model& m, const CodeLayout& l);

}  // namespace hw::model
