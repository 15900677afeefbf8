#include "model/emit/tissue_kernel_printer.hpp"

#include <fmt/format.h>

#include "model/emit/cuda_printer.hpp"
#include "model/passes/specialise.hpp"
#include "model/passes/tabulate.hpp"

namespace hw::model {

std::string print_tissue_kernels(const TissueKernelSpec& s) {
  const char* real = s.f32 ? "float" : "double";
  const std::string periodic = fmt::format("  static constexpr bool periodic_x = {}, periodic_y = {}, periodic_z = {};\n"
                                           "  static constexpr unsigned nx = {}, ny = {}, nz = {};\n",
                                           s.periodic[0], s.periodic[1], s.periodic[2], s.n[0], s.n[1], s.n[2]);
  std::string t = "#include \"kernels/cuda/monodomain.cuh\"\n#include \"kernels/cuda/steps_per_pass.cuh\"\n";
  // The whole-tissue kernels (the CG's operator, the pseudo-ECG) visit every tissue cell:
  // a box launch where the box is all tissue, else a launch over the tissue cell list.
  t += "#include \"kernels/cuda/ecg.cuh\"\n";
  t += fmt::format("struct hw_tissue_V {{\n"
                   "  static constexpr bool box = {}, links = {}, fourth = {}, phase = {}, cells = {}, per_cell = false,\n"
                   "                        stimuli = false;\n"
                   "{}}};\n",
                   s.box, s.links, s.fourth, s.phase, s.cells, periodic);
  t += "#include \"kernels/cuda/stimulus.cuh\"\n";
  t += fmt::format("extern \"C\" __global__ void hw_stimulus({0}* field, const unsigned int* cells, unsigned long long count, {0} dv) {{\n"
                   "  hw::cuda::lay_stimulus<{0}>(field, cells, count, dv);\n}}\n",
                   real);
  t += "#include \"kernels/cuda/frame.cuh\"\n";
  t += fmt::format("extern \"C\" __global__ void hw_frame(const {0}* src, const unsigned int* from, const unsigned int* to, "
                   "unsigned long long count, float* frame) {{\n"
                   "  hw::cuda::gather_frame<{0}>(src, from, to, count, frame);\n}}\n",
                   real);
  t += fmt::format("extern \"C\" __global__ void hw_ecg(const hw::cuda::PartArgs<{0}> a, const hw::cuda::EcgArgs e) {{\n"
                   "  hw::cuda::ecg_sums<{0}, hw_tissue_V>(a, e);\n}}\n",
                   real);
  if (s.implicit) {
    t += "#include \"kernels/cuda/diffusion_cg.cuh\"\n";
    for (const char* k : {"begin", "apply"})
      t += fmt::format(
          "extern \"C\" __global__ void hw_cg_{1}(const hw::cuda::PartArgs<{0}> a, const hw::cuda::CgArgs<{0}> g) {{\n"
          "  hw::cuda::cg_{1}<{0}, hw_tissue_V>(a, g);\n}}\n",
          real, k);
    for (const char* k : {"update", "direction", "finish", "sum"})
      t += fmt::format("extern \"C\" __global__ void hw_cg_{1}(const hw::cuda::CgArgs<{0}> g) {{ hw::cuda::cg_{1}<{0}>(g); }}\n",
                       real, k);
  }
  for (std::size_t q = 0; q < s.parts.size(); ++q) {
    const TissueKernelSpec::Part& p = s.parts[q];
    CudaOptions co;
    co.use_float = s.f32;
    co.function_prefix = fmt::format("hw_p{}", q);
    co.demo_kernel = false;
    // The steps printed state by state in double only: there they free registers the kernel
    // needs (the N-version slab at 0.05 mm, TT06 rl1: 10-11 % faster); in float they ran
    // 0.6-4.5 % slower (rabbit-tt06, tt06-3d-256, ord-heart). docs/benchmarks.md.
    co.fused_steps = !s.f32;
    const std::string pre = co.function_prefix;
    t += fmt::format("\n// ---- part {}: model {} ----\n", q, p.model_name);
    // Parameters that no cell varies are compiled in as constants (model/passes/specialise),
    // and the tables are made from that model: more of it is a function of V alone then.
    const Model specialised = specialise_parameters(*p.analysed, p.fixed);
    const Tabulation tables = s.cell_maths.tables ? tabulate_voltage_functions(specialised) : Tabulation{};
    co.tables = &tables;
    co.fast_intrinsics = s.cell_maths.fast;
    t += print_cuda(specialised, co);
    t += fmt::format(
        "struct {0}_M {{\n"
        "  static constexpr int ns = {0}_n_states, np = {0}_n_params, nc = {0}_n_constants, kv = {1};\n"
        "  static constexpr {2} to_model = {2}({11:a}), to_mv = {2}({12:a});  // from mV, to mV\n"
        "  static __device__ __forceinline__ void constants(const {2}* p, {2}* c) {{ {0}_constants(p, c); }}\n"
        "  static __device__ __forceinline__ void step({2} t, {2} dt, {2}* y, const {2}* p, const {2}* c) {{\n"
        "    {0}_step_{3}(t, dt, y, p, c);\n  }}\n}};\n"
        "struct {0}_V {{\n"
        "  static constexpr bool box = {4}, links = {5}, fourth = {10}, phase = {6}, cells = {7}, per_cell = {8},\n"
        "                        stimuli = {9};\n"
        "  static constexpr int substeps = {13};\n"
        "{14}}};\n"
        "struct {0}_V_fenced : {0}_V {{ static constexpr int substeps = 0; }};\n",
        pre, p.kv, real, s.integrator, s.box, s.links, s.phase, !p.identity, p.per_cell, s.stimuli, s.fourth,
        1.0 / p.v2mV, p.v2mV, s.substeps, periodic);
    for (const TissueKernelSpec::Kernel& k : p.kernels)
      t += fmt::format(
          "extern \"C\" __global__ void __launch_bounds__({1}) hw_part{2}{3}(const hw::cuda::PartArgs<{0}> a) {{\n"
          "  hw::cuda::{4}<{0}, {5}_M, {5}_V{6}{7}>(a);\n}}\n",
          real, k.bounds, q, k.suffix, k.function, pre, k.v_type, k.extra);
  }
  return t;
}

}  // namespace hw::model
