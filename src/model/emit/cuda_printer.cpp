#include "model/emit/cuda_printer.hpp"

#include <sstream>

#include "model/emit/identifiers.hpp"
#include "model/emit/printer_common.hpp"

namespace hw::model {

namespace {

struct CudaWriter {
  const Model& m;
  const TargetProfile& prof;
  std::string pre;   // sanitised prefix
  std::string real;  // float | double
  std::size_t ns;
  std::string inl;  // "__device__ __forceinline__ " or "__device__ __noinline__ "
  std::ostringstream out;

  std::string lit(double v) const { return prof.literal(v); }
  std::string y(std::size_t i) const { return "y[" + std::to_string(i) + "]"; }
  std::string idx(const char* a, std::size_t i) const {
    return std::string(a) + "[" + std::to_string(i) + "]";
  }
  bool gate(std::size_t i) const { return m.analysis[i].is_gate; }

  void open_step(const char* name) {
    out << inl + "void " << pre << "_step_" << name << "(" << real
        << " t, " << real << " dt, " << real << "* y, const " << real << "* p, const " << real
        << "* c) {\n";
  }
  void locals(const char* names) {
    out << "  " << real << " " << names << ";\n";
  }
  std::string arr(const char* n) const {
    return std::string(n) + "[" + std::to_string(ns > 0 ? ns : 1) + "]";
  }
  std::string em1(const std::string& J, const std::string& h) const {
    return pre + "_expm1_over(" + J + ", " + h + ")";
  }

  void steps() {
    const std::string half = lit(0.5) + " * dt";
    open_step("fe");
    locals(arr("f").c_str());
    out << "  " << pre << "_rhs(t, y, p, c, f);\n";
    for (std::size_t i = 0; i < ns; ++i) out << "  " << y(i) << " += dt * " << idx("f", i) << ";\n";
    out << "}\n\n";

    open_step("rk2");  // explicit midpoint
    locals((arr("f") + ", " + arr("ys")).c_str());
    out << "  " << pre << "_rhs(t, y, p, c, f);\n";
    for (std::size_t i = 0; i < ns; ++i)
      out << "  ys[" << i << "] = " << y(i) << " + " << half << " * f[" << i << "];\n";
    out << "  " << pre << "_rhs(t + " << half << ", ys, p, c, f);\n";
    for (std::size_t i = 0; i < ns; ++i) out << "  " << y(i) << " += dt * f[" << i << "];\n";
    out << "}\n\n";

    open_step("rk4");
    locals((arr("f") + ", " + arr("ys") + ", " + arr("acc")).c_str());
    out << "  " << pre << "_rhs(t, y, p, c, f);\n";
    for (std::size_t i = 0; i < ns; ++i)
      out << "  acc[" << i << "] = f[" << i << "]; ys[" << i << "] = " << y(i) << " + " << half
          << " * f[" << i << "];\n";
    out << "  " << pre << "_rhs(t + " << half << ", ys, p, c, f);\n";
    for (std::size_t i = 0; i < ns; ++i)
      out << "  acc[" << i << "] += " << lit(2) << " * f[" << i << "]; ys[" << i
          << "] = " << y(i) << " + " << half << " * f[" << i << "];\n";
    out << "  " << pre << "_rhs(t + " << half << ", ys, p, c, f);\n";
    for (std::size_t i = 0; i < ns; ++i)
      out << "  acc[" << i << "] += " << lit(2) << " * f[" << i << "]; ys[" << i
          << "] = " << y(i) << " + dt * f[" << i << "];\n";
    out << "  " << pre << "_rhs(t + dt, ys, p, c, f);\n";
    for (std::size_t i = 0; i < ns; ++i)
      out << "  " << y(i) << " += dt / " << lit(6) << " * (acc[" << i << "] + f[" << i
          << "]);\n";
    out << "}\n\n";

    open_step("rl1");  // gates exact for frozen a, b; the rest forward Euler
    locals((arr("f") + ", " + arr("J")).c_str());
    out << "  " << pre << "_rhs_jac(t, y, p, c, f, J);\n";
    for (std::size_t i = 0; i < ns; ++i)
      out << "  " << y(i) << " += "
          << (gate(i) ? "f[" + std::to_string(i) + "] * " + em1(idx("J", i), "dt")
                      : "dt * f[" + std::to_string(i) + "]")
          << ";\n";
    out << "}\n\n";

    open_step("rl2");  // half RL1 step to the midpoint, full step with midpoint a, b
    locals((arr("f") + ", " + arr("J") + ", " + arr("ys")).c_str());
    out << "  " << pre << "_rhs_jac(t, y, p, c, f, J);\n";
    for (std::size_t i = 0; i < ns; ++i)
      out << "  ys[" << i << "] = " << y(i) << " + "
          << (gate(i) ? "f[" + std::to_string(i) + "] * " + em1(idx("J", i), half)
                      : half + " * f[" + std::to_string(i) + "]")
          << ";\n";
    out << "  " << pre << "_rhs_jac(t + " << half << ", ys, p, c, f, J);\n";
    for (std::size_t i = 0; i < ns; ++i) {
      const std::string k = std::to_string(i);
      if (gate(i))
        out << "  " << y(i) << " += (f[" << k << "] + J[" << k << "] * (" << y(i) << " - ys["
            << k << "])) * " << em1(idx("J", i), "dt") << ";\n";
      else
        out << "  " << y(i) << " += dt * f[" << k << "];\n";
    }
    out << "}\n\n";

    open_step("sbe");  // one Newton step with the exact diagonal Jacobian
    locals((arr("f") + ", " + arr("J")).c_str());
    out << "  " << pre << "_rhs_jac(t, y, p, c, f, J);\n";
    for (std::size_t i = 0; i < ns; ++i)
      out << "  " << y(i) << " += dt * f[" << i << "] / (" << lit(1) << " - dt * J[" << i
          << "]);\n";
    out << "}\n\n";
  }
};

}  // namespace

std::string print_cuda(const Model& m, const CudaOptions& opt) {
  const CodeLayout l = make_layout(m);
  const std::string pre = sanitise_identifier(opt.function_prefix, 64);
  const TargetProfile prof = cuda_profile(opt.use_float, opt.fast_intrinsics, pre + "_powi");
  const VarNamer names = namer_for(m, l);
  const std::string inl = opt.force_inline ? "__device__ __forceinline__ " : "__device__ __noinline__ ";
  CudaWriter w{m, prof, pre, prof.real, m.states.size(), inl, {}};
  const std::string& real = prof.real;
  std::ostringstream& out = w.out;

  out << "// Generated by heartwave's model compiler (src/model/emit/cuda_printer.cpp).\n"
         "// Do not edit: regenerate it from the model. Precision: "
      << real << (prof.fast_intrinsics ? ", fast intrinsics" : "") << ".\n";
  out << layout_comment(m, l) << "\n";
  out << "constexpr int " << pre << "_n_states = " << m.states.size() << ";\n";
  out << "constexpr int " << pre << "_n_params = " << m.parameters.size() << ";\n";
  out << "constexpr int " << pre << "_n_constants = " << l.n_constants << ";\n\n";

  out << "// x^N by repeated squaring (strength reduction of pow with an integer exponent).\n"
      << "template <int N>\n" << inl << real << " " << pre << "_powi("
      << real << " x) {\n"
      << "  if constexpr (N < 0) return " << w.lit(1) << " / " << pre << "_powi<-N>(x);\n"
      << "  else if constexpr (N == 0) return " << w.lit(1) << ";\n"
      << "  else if constexpr (N == 1) return x;\n"
      << "  else if constexpr (N % 2 == 0) { const " << real << " h = " << pre
      << "_powi<N / 2>(x); return h * h; }\n"
      << "  else return " << pre << "_powi<N - 1>(x) * x;\n}\n\n";

  out << "// (e^{J h} - 1)/J, the exact propagator factor of a gate; -> h as J -> 0.\n"
      << inl + "" << real << " " << pre << "_expm1_over(" << real << " J, "
      << real << " h) {\n"
      << "  const " << real << " x = J * h;\n"
      << "  if (" << (opt.use_float ? "fabsf" : "fabs") << "(x) < " << w.lit(1e-5) << ") return h * ("
      << w.lit(1) << " + x * (" << w.lit(0.5) << " + x * " << w.lit(1.0 / 6.0) << "));\n"
      << "  return " << (opt.use_float ? "expm1f" : "expm1") << "(x) / J;\n}\n\n";

  const std::string args = real + " t, const " + real + "* y, const " + real + "* p, const " +
                           real + "* c";
  out << inl + "void " << pre << "_constants(const " << real << "* p, "
      << real << "* c) {\n"
      << print_straight_line(m, prof, constants_statements(m, l, prof), names, "  ") << "}\n\n";
  out << inl + "void " << pre << "_rhs(" << args << ", " << real
      << "* dydt) {\n"
      << print_straight_line(m, prof, rhs_statements(m, l, prof, false), names, "  ")
      << "}\n\n";
  out << inl + "void " << pre << "_rhs_jac(" << args << ", " << real
      << "* dydt, " << real << "* jdiag) {\n"
      << print_straight_line(m, prof, rhs_statements(m, l, prof, true), names, "  ")
      << "}\n\n";

  w.steps();

  out << "// method = static_cast<int>(hw::cell::Integrator): fe rk2 rk4 rl1 rl2 sbe.\n"
      << inl + "void " << pre << "_step(int method, " << real << " t, "
      << real << " dt, " << real << "* y, const " << real << "* p, const " << real
      << "* c) {\n  switch (method) {\n";
  const char* methods[] = {"fe", "rk2", "rk4", "rl1", "rl2", "sbe"};
  for (int k = 0; k < 6; ++k)
    out << "    case " << k << ": " << pre << "_step_" << methods[k] << "(t, dt, y, p, c); return;\n";
  out << "  }\n}\n\n";

  if (!opt.demo_kernel) return out.str();
  const std::size_t ns1 = m.states.size() ? m.states.size() : 1;
  const int nc1 = l.n_constants ? l.n_constants : 1;
  out << "// Steps n independent cells with uniform parameters; y is SoA (state k of cell i\n"
         "// at y[k*n + i]). A demonstration that the device functions compile and link.\n"
      << "extern \"C\" __global__ void " << pre << "_demo_step(int n, int steps, int method, "
      << real << " t, " << real << " dt, " << real << "* Y, const " << real << "* P) {\n"
      << "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      << "  if (i >= n) return;\n"
      << "  " << real << " y[" << ns1 << "], c[" << nc1 << "];\n"
      << "  " << pre << "_constants(P, c);\n"
      << "  for (int k = 0; k < " << pre << "_n_states; ++k) y[k] = Y[k * n + i];\n"
      << "  for (int s = 0; s < steps; ++s) " << pre << "_step(method, t + s * dt, dt, y, P, c);\n"
      << "  for (int k = 0; k < " << pre << "_n_states; ++k) Y[k * n + i] = y[k];\n"
      << "}\n";
  return out.str();
}

}  // namespace hw::model
