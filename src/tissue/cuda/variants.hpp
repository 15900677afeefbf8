// The CUDA engine's kernel variants in one table: each a way of compiling and launching a
// part's step, with when a part is offered it. The tuner times the offered variants on the
// run's first steps (device/block_tuner.hpp) and keeps the fastest;
// HEARTWAVE_CUDA_KERNEL=<name> leaves it only that one (tests compare the variants' bits,
// benchmarks their speeds).
//
// Why a table: a variant used to be edited into six places (the source, the engine's
// function list, the launches, the names, the environment check, describe()); now adding
// one is adding a row here and, if it needs a new kernel template, writing that in
// kernels/cuda/monodomain.cuh.
//
// The variants measured (docs/benchmarks.md, "The box kernels"):
//  - cell: a thread per cell, the model's step compiled in one block with the loads;
//  - capped / fenced / fenced-capped: for a kernel above 64 registers per thread, its
//    registers capped by the launch bounds at the occupancy step below (128: 2 blocks of
//    256 per SM; 64: 4), and the model's step fenced off from the loads and the stencil (a
//    sub-step loop of run-time count). O'Hara-Rudy at 172 registers keeps 8 warps per SM,
//    at 128 with 80 B spilled 16, and runs 19 % faster (ord-pig128, H100); TT06's step took
//    64 registers, then 99 once the grid was compiled in (15 % slower); fenced, 64 again. A
//    cap is no rule either (TT06 capped at 128 took 112 registers and ran 11 % slower), so
//    the tuner decides. A small kernel gets none: unfenced, Karma ran 13 % faster.
//  - window (seed 001's JDC sliding window) and tower (seed 004's towerDS: the window with
//    x halos in slots the neighbouring towers fill): a thread steps a column of layers of a
//    part that is the whole box with uniform σ. On the H100 neither won on any case or
//    block shape (karma3d-256: 0.833 of the copy roof a thread per cell, 0.683 window,
//    0.578 tower), so they are compiled and timed only when asked for by name; they stay
//    as the tiles a several-steps-per-pass kernel grows from. The tower's slots are filled
//    by each diffusing pass for the next, so it needs Godunov splitting and explicit
//    diffusion.
//  - steps3 / steps5: several steps per pass over memory (kernels/cuda/steps_per_pass.cuh):
//    a block steps its tile of columns K times (3 or 5) as it marches through the layers,
//    the halo recomputed. For a small model (at most kMostStepsStates states, each level's
//    held in registers) on the whole box, Godunov splitting and explicit diffusion; five
//    steps in float only (their tiles take 80 KiB of shared memory in double). A launch
//    advances K steps, so the tuner compares time per step. Their results are the thread-
//    per-cell kernel's bit for bit, but on the H200 they ran slower (karma3d-256: 7,491 and
//    4,966 steps/s against 10,040; karma2d, marched along y, 140,700 against 166,000;
//    docs/benchmarks.md): at 64 registers and 1,024 threads one block fills an SM, 1.7
//    times the cell-steps are computed (the halo), and each level of a layer costs about
//    100 instructions. And the tuner's one-launch trials favour them (a single step's trial
//    carries a launch's overhead that a graph does not). So, like the window, they are
//    compiled and timed only when asked for by name.
#pragma once

#include <string>
#include <vector>

#include "device/block_tuner.hpp"
#include "model/emit/tissue_kernel_printer.hpp"

namespace hw::tissue::cuda {

constexpr unsigned kThreads = 256;        // per block of a kernel as compiled; its __launch_bounds__
constexpr unsigned kCappedThreads = 256;  // per block of a capped kernel
constexpr unsigned kWindowThreads = 256;  // per block of a window kernel
constexpr unsigned kWindowDepths[] = {8, 32};  // layers a window thread steps, tried by the tuner
constexpr unsigned kStepsThreads = 1024;          // per block of a several-steps kernel at most
constexpr unsigned kStepsDepths[] = {16, 32, 64};  // layers a several-steps block marches through
constexpr int kMostStepsStates = 4;               // a several-steps kernel's model has at most these states

// What decides which variants a part is offered.
struct PartContext {
  bool whole_box = false;         // the part is the whole box, σ uniform and diagonal, second order
  bool godunov_explicit = false;  // Godunov splitting with explicit diffusion
  int register_cap = 0;           // the cap for a kernel above a step (64 or 128); 0: none
  int substeps = 1;               // ODE sub-steps per step
  int states = 0;                 // the model's states, V included
  bool phase = false;             // a phase-field boundary
  bool f32 = true;                // the run is in float
};

struct KernelVariant {
  const char* name;    // HEARTWAVE_CUDA_KERNEL's word
  const char* label;   // describe()'s
  const char* suffix;  // of the kernel's name, hw_part<q><suffix>
  bool window;         // a thread steps a column of layers (part_step_window); else a thread per cell
  bool fenced;         // the model's step in a sub-step loop of run-time count
  bool capped;         // registers capped by the launch bounds
  bool tower;          // the window with x-halo slots (its trials come in pairs)
  bool on_request;     // compiled and timed only when asked for by name
  bool (*offered)(const PartContext&);
  int steps = 1;       // steps a launch advances (several steps per pass: odd, above 1)
};

// The table, in the order the tuner lists them (the kernel as compiled first).
const std::vector<KernelVariant>& kernel_variants();

// The variants part `c` is offered, given HEARTWAVE_CUDA_KERNEL's word (`asked`, "" when
// unset): those whose condition holds, on-request ones only when asked. hw::Error for a word
// that names no variant.
std::vector<const KernelVariant*> offered_variants(const PartContext& c, const std::string& asked);

// The register cap of the variants for a kernel of `registers` per thread; 0: none.
int register_cap(int registers);

// Threads per block for a kernel of `registers` per thread: the size among 256, 128, 64 that
// keeps the most threads resident on an SM, the larger on a tie.
unsigned block_size(int registers);

// The kernel the source prints for variant v of a part whose kernel as compiled has
// `threads` threads per block and whose cap is `cap`.
model::TissueKernelSpec::Kernel kernel_of(const KernelVariant& v, unsigned threads, int cap);

// The launches the tuner tries for variant v (at index `index` of the part's kernels) over
// a part: for a part that is the box, every block shape (and window depth); else rows of
// `threads` (the block size for the kernel's registers).
std::vector<gpu::Launch> launches_of(const KernelVariant& v, int index, bool identity, const std::array<unsigned, 3>& n,
                                     unsigned threads);

// Whether some variant part `c` is offered (given `asked`) steps several steps a launch: its
// states then need a second buffer.
bool offers_several_steps(const PartContext& c, const std::string& asked);

// The launch grid of a several-steps kernel (K steps a pass) in blocks of `block`, each
// marching through `depth` layers (z; y on a sheet), on an n box.
gpu::Dim3 steps_grid(const std::array<unsigned, 3>& n, const gpu::Dim3& block, unsigned depth, int k);

// The tower layout's x-halo slots for blocks of bx × by on an nx × ny × nz box, and the most
// any of the tuner's tower launches needs (its narrowest blocks).
std::size_t tower_slots(const std::array<unsigned, 3>& n, unsigned bx, unsigned by);
std::size_t most_tower_slots(const std::array<unsigned, 3>& n);

}  // namespace hw::tissue::cuda
