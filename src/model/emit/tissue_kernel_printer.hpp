// The CUDA source of a tissue run: the fused step kernel (kernels/cuda/monodomain.cuh)
// instantiated for each part (model region) with its printed model, and the whole-tissue
// kernels (the pseudo-ECG, the CG of implicit diffusion), as NVRTC compiles them.
//
// Why here, in the code-generation floor, and fed a plain description: what is printed
// depends on the case only through the few facts below, so the printer needs no tissue
// type, and the engine (tissue/cuda) decides which kernel variants a part gets (its variant
// registry) while this file only writes them down. The grid is compiled in: a neighbour on
// the box is then a load at a constant offset.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "model/emit/cell_maths.hpp"
#include "model/ir/model.hpp"

namespace hw::model {

struct TissueKernelSpec {
  // One extern "C" kernel of a part: hw_part<q><suffix>, __launch_bounds__(<bounds>),
  // calling hw::cuda::<function><real, M, V<v_type>[, extra]>.
  struct Kernel {
    std::string suffix;    // "", "_capped", "_window", ...
    std::string bounds;    // "256" or "256, 4"
    std::string function;  // "part_step" (a thread per cell) or "part_step_window"
    std::string v_type;    // "" or "_fenced": the V struct's variant (sub-steps a run-time loop)
    std::string extra;     // more template arguments (", true": the tower layout)
  };
  struct Part {
    const Model* analysed = nullptr;
    std::vector<std::optional<double>> fixed;  // parameters compiled in as constants
    std::string model_name;                     // for a comment
    int kv = 0;                                 // the voltage state
    double v2mV = 1;                            // model voltage unit to mV
    bool identity = true;                       // the part is every stored cell
    bool per_cell = false;                      // parameters vary per cell
    std::vector<Kernel> kernels;
  };
  bool f32 = true;
  std::array<unsigned, 3> n{1, 1, 1};
  std::array<bool, 3> periodic{false, false, false};
  bool box = true;       // the row layout is the whole box
  bool links = false;    // link coefficients (σ not uniform and diagonal, or a mask)
  bool fourth = false;   // fourth-order stencil
  bool phase = false;    // phase-field boundary
  bool cells = false;    // whole-tissue kernels walk a cell list (the box is not all tissue)
  bool implicit = false; // the CG kernels of implicit diffusion
  bool stimuli = false;  // the step kernels add the stimulus field (the run has stimuli)
  int substeps = 1;
  CellMaths cell_maths;    // lookup tables of V, fast intrinsics (cell_maths.hpp)
  std::string integrator;  // the model step's name: step_<integrator>
  std::vector<Part> parts;
};

// The kernels' source text (NVRTC compiles it with the embedded headers).
std::string print_tissue_kernels(const TissueKernelSpec& spec);

}  // namespace hw::model
