#include "tissue/cuda/kernel_source.hpp"

#include <fmt/format.h>

#include "device/embedded.hpp"
#include "model/emit/tissue_kernel_printer.hpp"

namespace hw::tissue::cuda {

bool uniform_sigma_case(const SimSetup& s) {
  return s.sigma.uniform_diagonal(s.geo.mask.empty(), !s.phi.empty());
}

PartContext part_context(const SimSetup& s, const RowLayout& layout, const Part& p, int cap) {
  PartContext c;
  c.whole_box = layout.box && uniform_sigma_case(s) && p.identity && s.order == StencilOrder::second;
  c.godunov_explicit = s.time.splitting == Splitting::godunov && s.time.diffusion == DiffusionScheme::forward_euler;
  c.register_cap = cap;
  c.substeps = s.time.ode_substeps;
  c.states = p.ns;
  c.phase = !s.phi.empty();
  c.f32 = s.time.precision != Precision::f64;
  return c;
}

}  // namespace hw::tissue::cuda

namespace hw::tissue {

gpu::CudaSource cuda_kernel_source(const SimSetup& s, bool f32, unsigned threads, const std::vector<int>& caps,
                                   const std::string& asked) {
  // The engine's choices, made the same way here: the row layout and whether the stencil
  // needs link coefficients.
  const RowLayout layout = row_layout(s.geo.grid, s.geo.mask);
  const Grid& g = s.geo.grid;
  model::TissueKernelSpec spec;
  spec.f32 = f32;
  spec.n = {unsigned(g.nx()), unsigned(g.ny()), unsigned(g.nz())};
  for (int a = 0; a < 3; ++a) spec.periodic[std::size_t(a)] = g.bc[std::size_t(a)] == Boundary::periodic;
  spec.box = layout.box;
  spec.links = !cuda::uniform_sigma_case(s);
  spec.fourth = s.order == StencilOrder::fourth;
  spec.phase = !s.phi.empty();
  spec.cells = !(layout.box && s.geo.mask.empty());
  spec.implicit = s.time.diffusion != DiffusionScheme::forward_euler;
  spec.stimuli = !s.stimuli.empty();
  spec.substeps = s.time.ode_substeps;
  spec.integrator = cell::integrator_name(s.integrator);
  spec.cell_maths = s.time.cell_maths;
  for (std::size_t q = 0; q < s.parts.size(); ++q) {
    const Part& p = s.parts[q];
    model::TissueKernelSpec::Part& sp = spec.parts.emplace_back();
    sp.analysed = p.analysed.get();
    sp.model_name = p.model;
    sp.kv = p.kv;
    sp.v2mV = p.v2mV;
    sp.identity = p.identity;
    sp.per_cell = p.per_cell;
    // Parameters that no cell varies are compiled in as constants (model/passes/specialise).
    // From Part::uniform, not pcell: a kernel compiled again mid-run comes after the
    // simulation has freed pcell.
    if (p.uniform.size() != std::size_t(p.np))
      throw Error(fmt::format("CUDA kernel source: part {} ({}) has no uniform-parameter list; its set-up did not come "
                              "from make_sim_setup",
                              q, p.model));
    sp.fixed = p.uniform;
    const int cap = q < caps.size() ? caps[q] : 0;
    cuda::PartContext context = cuda::part_context(s, layout, p, cap);
    context.f32 = f32;
    for (const cuda::KernelVariant* v : cuda::offered_variants(context, asked))
      sp.kernels.push_back(cuda::kernel_of(*v, threads, cap));
  }
  gpu::CudaSource src;
  src.name = "heartwave_tissue.cu";
  src.headers = gpu::embedded_sources();
  src.options = {"-default-device"};
  if (f32)
    for (auto& o : gpu::float_kernel_options()) src.options.push_back(o);
  src.text = model::print_tissue_kernels(spec);
  return src;
}

}  // namespace hw::tissue
