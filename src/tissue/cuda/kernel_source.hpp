// The CUDA engine's kernel source for a set-up: the variants each part is offered
// (tissue/cuda/variants.hpp) written by the code-generation floor's tissue printer
// (model/emit/tissue_kernel_printer.hpp), with the embedded headers and NVRTC options.
#pragma once

#include <vector>

#include "device/compile.hpp"
#include "mesh/row_layout.hpp"
#include "tissue/cuda/variants.hpp"
#include "tissue/engine.hpp"
#include "tissue/reaction.hpp"

namespace hw::tissue::cuda {

// What decides part p's variants in set-up s (cap: its register cap, 0 when none yet).
PartContext part_context(const SimSetup& s, const RowLayout& layout, const Part& p, int cap);

// σ uniform and diagonal on a box without a phase field: three weights, no link arrays.
bool uniform_sigma_case(const SimSetup& s);

}  // namespace hw::tissue::cuda

namespace hw::tissue {

// The CUDA engine's kernel source for set-up s (NVRTC text with its embedded headers):
// the fused kernel (kernels/cuda/monodomain.cuh) instantiated per part as hw_part<q>, with
// `threads` as its __launch_bounds__, and the variants the part is offered. Tests compile
// it without a GPU. caps[q] > 0: part q also gets its variants capped at caps[q] registers
// per thread (64 or 128) and fenced (the model's step a block of its own), hw_part<q>_capped,
// _fenced and _fenced_capped. asked: the variant forced by name (CudaEngineOptions::kernel,
// whose default is HEARTWAVE_CUDA_KERNEL's).
gpu::CudaSource cuda_kernel_source(const SimSetup& s, bool f32, unsigned threads = 256,
                                   const std::vector<int>& caps = {},
                                   const std::string& asked = CudaEngineOptions::from_environment().kernel);

}  // namespace hw::tissue
