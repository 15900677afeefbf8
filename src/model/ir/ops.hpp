// The operations of the expression IR, in one list (SymEngine style).
//
// Every pass and printer switches over this list; adding an operation here makes the
// compiler point at each place that must learn it.
#pragma once

#include <cstdint>
#include <string_view>

namespace hw::model {

// X(name, arity, spelling): arity -1 = variadic; spelling is the C/C++ function name for
// functions and the infix symbol for operators (used by printers and the IR dump).
#define HW_EXPR_OPS(X)   \
  X(constant, 0, "")     \
  X(variable, 0, "")     \
  X(add, 2, "+")         \
  X(sub, 2, "-")         \
  X(mul, 2, "*")         \
  X(div, 2, "/")         \
  X(neg, 1, "-")         \
  X(pow, 2, "pow")       \
  X(exp, 1, "exp")       \
  X(log, 1, "log")       \
  X(log10, 1, "log10")   \
  X(sqrt, 1, "sqrt")     \
  X(abs, 1, "fabs")      \
  X(floor, 1, "floor")   \
  X(ceil, 1, "ceil")     \
  X(sin, 1, "sin")       \
  X(cos, 1, "cos")       \
  X(tan, 1, "tan")       \
  X(asin, 1, "asin")     \
  X(acos, 1, "acos")     \
  X(atan, 1, "atan")     \
  X(sinh, 1, "sinh")     \
  X(cosh, 1, "cosh")     \
  X(tanh, 1, "tanh")     \
  X(asinh, 1, "asinh")   \
  X(acosh, 1, "acosh")   \
  X(atanh, 1, "atanh")   \
  X(min, 2, "fmin")      \
  X(max, 2, "fmax")      \
  X(rem, 2, "fmod")      \
  X(lt, 2, "<")          \
  X(le, 2, "<=")         \
  X(gt, 2, ">")          \
  X(ge, 2, ">=")         \
  X(eq, 2, "==")         \
  X(ne, 2, "!=")         \
  X(logical_and, 2, "&&") \
  X(logical_or, 2, "||") \
  X(logical_xor, 2, "!=") \
  X(logical_not, 1, "!") \
  X(select, 3, "?:")     \
  X(piecewise, -1, "piecewise")

enum class Op : std::uint8_t {
#define HW_X(name, arity, spelling) name,
  HW_EXPR_OPS(HW_X)
#undef HW_X
};

struct OpInfo {
  std::string_view name;      // as in the enum
  int arity;                  // -1 = variadic
  std::string_view spelling;  // C function name or infix symbol
};

const OpInfo& op_info(Op op);

// Relations and logic produce booleans (1/0); the rest produce reals.
bool is_boolean(Op op);
// exp, log, sin, ... : one argument, printed as a function call.
bool is_unary_function(Op op);

}  // namespace hw::model
