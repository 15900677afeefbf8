#include "model/emit/cpp_printer.hpp"

#include <algorithm>
#include <sstream>

#include "runtime/integrators.hpp"
#include "model/emit/block_solver.hpp"
#include "model/emit/fused_step.hpp"
#include "model/emit/identifiers.hpp"
#include "model/emit/printer_common.hpp"
#include "model/passes/tabulate.hpp"

namespace hw::model {

std::string cpp_factory_symbol(const CppOptions& opt) {
  return sanitise_identifier(opt.symbol_prefix, 64) + "_make_kernel";
}

// Fixed text: the helpers and the per-integrator SoA loops do not depend on the model.
static constexpr const char* kPowi = R"(// x^N by repeated squaring (strength reduction of pow with an integer exponent).
template <int N, class T>
inline T powi(T x) {
  if constexpr (N < 0) {
    return T(1) / powi<-N>(x);
  } else if constexpr (N == 0) {
    return T(1);
  } else if constexpr (N == 1) {
    return x;
  } else if constexpr (N % 2 == 0) {
    const T h = powi<N / 2>(x);
    return h * h;
  } else {
    return powi<N - 1>(x) * x;
  }
}

// x^e for an exponent that is a parameter. Model<Real, true> is used for a batch whose
// shared parameters make every such exponent a small integer (checked once per batch, see
// step_batch): the power is then a few multiplications by squaring, branch-free so the cell
// loop still vectorises, instead of a vector pow, the most expensive call in such models
// (Hill coefficients, Karma's M). Per-cell parameters and other exponents take std::pow.
template <bool kIntPow, class T>
[[gnu::always_inline]] inline T pow_param(T x, T e) {
  if constexpr (kIntPow) {
    const int n = int(std::abs(e));
    T r = T(1), b = x;
#pragma GCC unroll 4
    for (int bit = 0; bit < 4; ++bit) {
      r = ((n >> bit) & 1) ? r * b : r;
      b = b * b;
    }
    return e < T(0) ? T(1) / r : r;
  } else {
    return std::pow(x, e);
  }
}

template <class T>
inline bool small_integer(T e) {
  return std::abs(e) <= T(15) && e == std::trunc(e);
}

)";

// cell_maths "fast" (model/emit/cell_maths.hpp): the approximations the GPU's fast intrinsics
// make, evaluated on the CPU so that the bounds CI checks are those of what the GPU runs. In
// float each rounds its argument as the intrinsic does (the source of nearly all of its
// error: __expf(x) is ex2.approx(x * 1.44269504f), whose product's rounding costs up to
// |x| ulp); the hardware's own ex2/lg2/rcp approximations (2 ulp, 2^-22 and 1 ulp, CUDA's
// programming guide) are taken as correctly rounded here. Subnormals are not flushed. In
// double the model's maths are kept, as the CUDA printer keeps them.
static constexpr const char* kFastMath = R"(// The GPU's fast intrinsics, emulated in float (cell_maths "fast"; cpp_printer.cpp says how).
template <class T>
[[gnu::always_inline]] inline T hw_fast_exp(T x) {
  if constexpr (sizeof(T) == 4) return std::exp2(x * 1.44269504f);  // __expf
  else return std::exp(x);
}
template <class T>
[[gnu::always_inline]] inline T hw_fast_log(T x) {
  if constexpr (sizeof(T) == 4) return std::log2(x) * 0.693147182f;  // __logf
  else return std::log(x);
}
template <class T>
[[gnu::always_inline]] inline T hw_fast_log10(T x) {
  if constexpr (sizeof(T) == 4) return std::log2(x) * 0.301029995f;  // __log10f
  else return std::log10(x);
}
template <class T>
[[gnu::always_inline]] inline T hw_fast_pow(T x, T e) {
  if constexpr (sizeof(T) == 4) return std::exp2(e * std::log2(x));  // __powf
  else return std::pow(x, e);
}
template <class T>
[[gnu::always_inline]] inline T hw_fast_div(T a, T b) {
  // __fdividef: a * (1/b), and 0 for 2^126 < |b| < 2^128.
  if constexpr (sizeof(T) == 4) return std::fabs(b) > 0x1p126f && std::fabs(b) < 0x1p128f ? a * 0.0f : a * (1.0f / b);
  else return a / b;
}
template <bool kIntPow, class T>
[[gnu::always_inline]] inline T hw_fast_pow_param(T x, T e) {
  if constexpr (kIntPow) return pow_param<true>(x, e);
  else return hw_fast_pow(x, e);
}

)";

// libmvec (glibc) has vector versions of these, but <cmath> declares them SIMD only under
// -ffast-math, which would change results. Declaring them here lets GCC call the vector
// versions from the vectorised cell loop without it; they differ from the scalar libm by a
// few ulp at most (the JIT and built-in tests compare against the interpreter).
static constexpr const char* kSimdMath = R"(// Vector variants from glibc's libmvec for the loop over cells (see cpp_printer.cpp).
#if defined(__GNUC__) && !defined(__clang__) && defined(__amd64__) && defined(__GLIBC__)
#define HW_SIMD_MATH(name)                                                     \
  extern "C" __attribute__((simd("notinbranch"))) double name(double) noexcept; \
  extern "C" __attribute__((simd("notinbranch"))) float name##f(float) noexcept;
HW_SIMD_MATH(exp)
HW_SIMD_MATH(expm1)
HW_SIMD_MATH(log)
HW_SIMD_MATH(log10)
HW_SIMD_MATH(log1p)
HW_SIMD_MATH(sin)
HW_SIMD_MATH(cos)
HW_SIMD_MATH(tan)
HW_SIMD_MATH(sinh)
HW_SIMD_MATH(cosh)
HW_SIMD_MATH(tanh)
HW_SIMD_MATH(asin)
HW_SIMD_MATH(acos)
HW_SIMD_MATH(atan)
#undef HW_SIMD_MATH
extern "C" __attribute__((simd("notinbranch"))) double pow(double, double) noexcept;
extern "C" __attribute__((simd("notinbranch"))) float powf(float, float) noexcept;
extern "C" __attribute__((simd("notinbranch"))) double atan2(double, double) noexcept;
extern "C" __attribute__((simd("notinbranch"))) float atan2f(float, float) noexcept;
#endif

)";

// The batch loop of runtime/integrators.hpp specialised to this model and one integrator. The
// steps loop is outside the cell loop (state goes back to memory between steps) and one
// cell's step is a separate always-inlined function: GCC 12 vectorises the `omp simd` cell
// loop only without inner loops, and locals of that loop's own body whose address is
// taken become per-lane arrays it then rejects ("not suitable for scatter store").
// Loads and stores are printed per state (LOAD_Y etc. are replaced by the printer).
static constexpr const char* kBatch = R"(
template <class Real, hw::cell::Integrator kMethod, class M>
[[gnu::always_inline]] inline void step_one(const M& m, Real t, Real dt, Real* Y,
                                            std::size_t stride, std::size_t i, const Real* p,
                                            const Real* c) {
  Real y[Model<Real>::kStates > 0 ? Model<Real>::kStates : 1];
@LOAD_Y@  hw::cell::step_cell(m, kMethod, t, dt, y, p, c);
@STORE_Y@}

// The same with the voltage outside Y (Batch::v; LOAD_YV leaves its slot out of Y).
template <class Real, hw::cell::Integrator kMethod, class M>
[[gnu::always_inline]] inline void step_one_v(const M& m, Real t, Real dt, Real* Y,
                                              std::size_t stride, std::size_t i, Real* V,
                                              const Real* p, const Real* c) {
  Real y[Model<Real>::kStates > 0 ? Model<Real>::kStates : 1];
@LOAD_YV@  hw::cell::step_cell(m, kMethod, t, dt, y, p, c);
@STORE_YV@}

template <class Real, hw::cell::Integrator kMethod>
[[gnu::always_inline]] inline void step_one_own_params(const Model<Real>& m, Real t, Real dt,
                                                       Real* Y, const Real* P,
                                                       std::size_t stride, std::size_t i) {
  Real p[Model<Real>::kParams > 0 ? Model<Real>::kParams : 1];
  Real c[Model<Real>::kConstants > 0 ? Model<Real>::kConstants : 1];
@LOAD_P@  m.constants(p, c);
  step_one<Real, kMethod>(m, t, dt, Y, stride, i, p, c);
}

template <class Real, hw::cell::Integrator kMethod>
void step_batch(Real t, Real dt, int steps, const hw::cell::Batch<Real>& b) {
  const Model<Real> m;
  constexpr int np = Model<Real>::kParams > 0 ? Model<Real>::kParams : 1;
  constexpr int nc = Model<Real>::kConstants > 0 ? Model<Real>::kConstants : 1;
  const std::size_t n = b.n, stride = b.stride;
  Real* const Y = b.y;
  if (!b.per_cell_params) {
    // A local copy: stores to Y cannot alias it, so parameter loads and conditions on t and
    // parameters only (a stimulus window) are hoisted out of the cell loop.
    Real p[np] = {}, c[nc] = {};
    for (int k = 0; k < Model<Real>::kParams; ++k) p[k] = b.p[k];
    m.constants(p, c);
    Real* const V = b.v;
    const auto run = [&](const auto& model) {
      for (int s = 0; s < steps; ++s) {
        const Real ts = t + s * dt;
        if (V) {
#pragma omp simd
          for (std::size_t i = 0; i < n; ++i)
            step_one_v<Real, kMethod>(model, ts, dt, Y, stride, i, V, p, c);
        } else {
#pragma omp simd
          for (std::size_t i = 0; i < n; ++i) step_one<Real, kMethod>(model, ts, dt, Y, stride, i, p, c);
        }
      }
    };
    if constexpr (Model<Real>::kExponentParams) {
      if (Model<Real>::integer_exponents(p)) return run(Model<Real, true>{});
    }
    run(m);
    return;
  }
  const Real* const P = b.p;
  for (int s = 0; s < steps; ++s) {
    const Real ts = t + s * dt;
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i)
      step_one_own_params<Real, kMethod>(m, ts, dt, Y, P, stride, i);
  }
}

@STEP_ANY@
)";

// `  a[k] = B[k * stride + i];` for k < n (or the reverse), one line each, so the cell loop
// body has no inner loop.
static std::string per_index(std::size_t n, const char* fmt_lhs, const char* fmt_rhs) {
  std::string s;
  for (std::size_t k = 0; k < n; ++k) {
    const std::string ks = std::to_string(k);
    auto fill = [&](std::string f) {
      for (std::size_t at; (at = f.find('#')) != std::string::npos;) f.replace(at, 1, ks);
      return f;
    };
    s += "  " + fill(fmt_lhs) + " = " + fill(fmt_rhs) + ";\n";
  }
  return s;
}

// kv: the voltage state (Batch::v), or −1 when the model has none.
// step_any: a switch over the integrators the kernel is built for.
static std::string step_any_text(const CppOptions& opt) {
  std::string s =
      "template <class Real>\n"
      "void step_any(hw::cell::Integrator method, Real t, Real dt, int steps, const hw::cell::Batch<Real>& b) {\n"
      "  using hw::cell::Integrator;\n"
      "  switch (method) {\n";
  for (int i = 0; i < hw::cell::kIntegratorCount; ++i) {
    if (!(opt.integrators >> i & 1u)) continue;
    const std::string n = hw::cell::integrator_name(hw::cell::Integrator(i));
    s += "    case Integrator::" + n + ": return step_batch<Real, Integrator::" + n + ">(t, dt, steps, b);\n";
  }
  s += "    default: break;\n  }\n"
       "  throw hw::Error(std::string(\"this compiled model kernel was built without integrator \") +\n"
       "                  hw::cell::integrator_name(method));\n}\n";
  return s;
}

static std::string batch_text(std::size_t ns, std::size_t np, int kv, const CppOptions& opt) {
  std::string s = kBatch;
  const auto put = [&](const std::string& key, const std::string& text) {
    s.replace(s.find(key), key.size(), text);
  };
  put("@LOAD_Y@", per_index(ns, "y[#]", "Y[# * stride + i]"));
  put("@STORE_Y@", per_index(ns, "Y[# * stride + i]", "y[#]"));
  put("@LOAD_P@", per_index(np, "p[#]", "P[# * stride + i]"));
  std::string load, store;
  for (std::size_t k = 0; k < ns; ++k) {
    const std::string ks = std::to_string(k);
    const std::string slot = std::to_string(kv >= 0 && int(k) > kv ? k - 1 : k);
    const std::string mem = int(k) == kv ? "V[i]" : "Y[" + slot + " * stride + i]";
    load += "  y[" + ks + "] = " + mem + ";\n";
    store += "  " + mem + " = y[" + ks + "];\n";
  }
  put("@LOAD_YV@", load);
  put("@STORE_YV@", store);
  put("@STEP_ANY@", step_any_text(opt));
  return s;
}

static void function(std::ostringstream& out, const std::string& signature,
                     const std::string& body) {
  // always_inline: rhs and rhs_jac are large and called more than once per step; left as
  // calls they stop the vectoriser in the cell loop ("statement clobbers memory").
  out << "  [[gnu::always_inline]] " << signature << " const {\n" << body << "  }\n";
}

std::string print_cpp(const Model& m, const CppOptions& opt) {
  const CodeLayout l = make_layout(m);
  TargetProfile prof = cpp_profile(opt.fast_intrinsics);
  prof.tables = opt.tables && !opt.tables->empty() ? opt.tables : nullptr;
  prof.table_prefix = "hw";
  const VarNamer names = namer_for(m, l);
  const std::size_t ns = m.states.size(), np = m.parameters.size(), na = m.algebraics.size();

  std::ostringstream out;
  out << "// Generated by heartwave's model compiler (src/model/emit/cpp_printer.cpp).\n"
         "// Do not edit: regenerate it from the model.\n";
  out << layout_comment(m, l) << "\n";
  out << "#include <cmath>\n#include <cstddef>\n#include <limits>\n#include <string>\n\n"
         "#include \"runtime/cell_kernel.hpp\"\n#include \"runtime/integrators.hpp\"\n#include \"core/error.hpp\"\n\n"
      << kSimdMath << "namespace {\n\n"
      << kPowi << (prof.fast_intrinsics ? kFastMath : "");
  if (prof.tables) out << print_tables(*prof.tables, prof, "alignas(64) constexpr ") << "\n";

  // Parameters used as exponents (pow_param): see kPowi.
  std::vector<std::uint32_t> exponent_params;
  for (std::size_t id = 0; id < m.pool.size(); ++id) {
    const Node& n = m.pool.node(ExprId(id));
    if (n.op != Op::pow) continue;
    const Node& e = m.pool.node(n.args[1]);
    if (e.op == Op::variable && e.var_kind == VarKind::param &&
        std::find(exponent_params.begin(), exponent_params.end(), e.index) == exponent_params.end())
      exponent_params.push_back(e.index);
  }
  out << "template <class Real, bool kIntPow = false>\nstruct Model {\n";
  out << "  static constexpr int kStates = " << ns << ";\n";
  out << "  static constexpr int kParams = " << np << ";\n";
  out << "  static constexpr int kConstants = " << l.n_constants << ";\n";
  out << "  static constexpr int kAlgebraics = " << na << ";\n";
  out << "  static constexpr bool kGate[" << std::max<std::size_t>(ns, 1) << "] = {";
  for (std::size_t i = 0; i < ns; ++i) out << (i ? ", " : "") << (m.analysis[i].is_gate ? "true" : "false");
  if (ns == 0) out << "false";
  out << "};\n\n";
  out << "  constexpr int n_states() const { return kStates; }\n"
         "  constexpr int n_params() const { return kParams; }\n"
         "  constexpr int n_constants() const { return kConstants; }\n"
         "  constexpr int n_algebraics() const { return kAlgebraics; }\n"
         "  constexpr bool is_gate(int i) const { return kGate[i]; }\n";
  out << block_structure(m, "", "  ");
  out << print_block_solver(m, "Real", "[[gnu::always_inline]] ", "  ");
  if (opt.fused_steps) out << print_fused_steps(m, l, prof, names, "[[gnu::always_inline]] ", "  ");
  out << "  static constexpr int kThresholds = " << m.thresholds.size() << ";\n\n";
  // True when every parameter used as an exponent is a small integer: step_batch then uses
  // Model<Real, true>, whose pow_param multiplies (false when there are none).
  out << "  static constexpr bool kExponentParams = " << (exponent_params.empty() ? "false" : "true")
      << ";\n";
  out << "  static bool integer_exponents([[maybe_unused]] const Real* p) {\n    return ";
  if (exponent_params.empty()) out << "false";
  for (std::size_t k = 0; k < exponent_params.size(); ++k)
    out << (k ? " && " : "") << "small_integer(p[" << exponent_params[k] << "])";
  out << ";\n  }\n\n";

  function(out, "void constants([[maybe_unused]] const Real* p, [[maybe_unused]] Real* c)",
           print_straight_line(m, prof, constants_statements(m, l, prof), names, "    "));
  const std::string args =
      "[[maybe_unused]] Real t, [[maybe_unused]] const Real* y, [[maybe_unused]] const Real* "
      "p, [[maybe_unused]] const Real* c";
  function(out, "void rhs(" + args + ", Real* dydt)",
           print_straight_line(m, prof, rhs_statements(m, l, prof, false), names, "    "));
  function(out, "void rhs_jac(" + args + ", Real* dydt, Real* jdiag)",
           print_straight_line(m, prof, rhs_statements(m, l, prof, true), names, "    "));
  if (!m.blocks.empty())
    function(out, "void rhs_jac_blocks(" + args + ", Real* dydt, Real* jdiag, Real* A)",
             print_straight_line(m, prof, rhs_blocks_statements(m, l, prof), names, "    "));
  if (!m.thresholds.empty())
    function(out, "void thresholds(" + args + ", Real* g)",
             print_straight_line(m, prof, threshold_statements(m, l, prof), names, "    "));
  function(out, "void algebraics(" + args + ", [[maybe_unused]] Real* out)",
           print_straight_line(m, prof, algebraics_statements(m, l, prof), names, "    "));
  out << "};\n";

  if (opt.standalone_kernel_factory) {
    const int kv = m.roles.voltage_state ? int(*m.roles.voltage_state) : -1;
    out << batch_text(ns, np, kv, opt);
    out << "constexpr int kVoltageState = " << kv << ";\n";
    const std::string prefix = sanitise_identifier(opt.symbol_prefix, 64);
    out << R"cpp(
class Kernel final : public hw::cell::CellKernel {
 public:
  std::string describe() const override { return "compiled C++ ()cpp" << prefix << R"cpp()"; }
  int n_states() const override { return Model<double>::kStates; }
  int n_params() const override { return Model<double>::kParams; }
  int n_constants() const override { return Model<double>::kConstants; }
  int n_algebraics() const override { return Model<double>::kAlgebraics; }
  bool is_gate(int i) const override {
    return i >= 0 && i < Model<double>::kStates && Model<double>::kGate[i];
  }
  bool external_voltage(int k) const override { return k >= 0 && k == kVoltageState; }
  void step(hw::cell::Integrator method, double t, double dt, int steps,
            const hw::cell::Batch<double>& b) const override {
    @STEP_DOUBLE@
  }
  void step(hw::cell::Integrator method, float t, float dt, int steps,
            const hw::cell::Batch<float>& b) const override {
    @STEP_FLOAT@
  }
  void constants(const double* p, double* c) const override { Model<double>{}.constants(p, c); }
  void rhs_jac(double t, const double* y, const double* p, const double* c, double* dydt,
               double* jdiag) const override {
    Model<double>{}.rhs_jac(t, y, p, c, dydt, jdiag);
  }
  void algebraics(double t, const double* y, const double* p, const double* c,
                  double* out) const override {
    Model<double>{}.algebraics(t, y, p, c, out);
  }
};

}  // namespace

extern "C" __attribute__((visibility("default"))) hw::cell::CellKernel* )cpp"
        << cpp_factory_symbol(opt) << R"cpp(() {
  return new Kernel();
}
)cpp";
    const auto precision_body = [](bool built, const char* real) {
      return built ? std::string("step_any<") + real + ">(method, t, dt, steps, b);"
                   : std::string("(void)method, (void)t, (void)dt, (void)steps, (void)b;\n    throw hw::Error(\"this "
                                 "compiled model kernel was built without ") + real + " precision\");";
    };
    std::string text = out.str();
    const auto put = [&](const std::string& key, const std::string& body) {
      text.replace(text.find(key), key.size(), body);
    };
    put("@STEP_DOUBLE@", precision_body(opt.double_precision, "double"));
    put("@STEP_FLOAT@", precision_body(opt.single_precision, "float"));
    return text;
  } else {
    out << "\n}  // namespace\n";
  }
  return out.str();
}

}  // namespace hw::model
