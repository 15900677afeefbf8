// CUDA source to a loadable GPU image with NVRTC, cached on disk; and plain PTX, uncached.
//
// Why a cache: NVRTC takes seconds for a large model (O'Hara-Rudy) and a run or a test
// suite builds the same kernels again and again. The key is SHA-256 of (source, every
// header's name and text, options, target architecture, NVRTC version), so any change to
// the model, the integrator, the precision, the kernel variant or the toolchain gives a
// new entry. The cache is the model JIT's folder ($HEARTWAVE_CACHE, ...), files are written
// atomically and pruned with the JIT's libraries (model/jit/jit.hpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace hw::gpu {

struct CudaSource {
  std::string name = "heartwave_kernels.cu";  // for NVRTC's messages
  std::string text;
  std::vector<std::pair<std::string, std::string>> headers;  // include name, text
  std::vector<std::string> options;                          // besides arch and -std
};

struct CompiledImage {
  std::string image;        // cubin (or PTX when NVRTC does not know the device's arch)
  std::string arch;         // what it was compiled for, e.g. "sm_90"
  bool from_cache = false;
  std::string cache_path;   // the cubin's file
  double compile_seconds = 0;
};

// Compiles for `arch` (e.g. "sm_90"). A compile failure throws hw::Error with NVRTC's log
// and the path where the failing source was kept.
CompiledImage compile_cuda(const CudaSource& src, const std::string& arch);

// The options of every float kernel: subnormals flushed to zero (as the cpu engine's passes
// do: the exponential tails ahead of a front are subnormal; docs/tissue.md), division and
// square root to within 2 ulp rather than correctly rounded: both far inside float's own
// error over a step, and IEEE division is several times the instructions of the
// reciprocal it becomes (O'Hara-Rudy divides 465 times per RL1 step). Double kernels keep
// IEEE division and subnormals.
std::vector<std::string> float_kernel_options();

// NVRTC's version as "major.minor"; "" when built without NVRTC.
std::string nvrtc_version();

// True when this build can compile CUDA (callers and tests use it to skip politely).
bool nvrtc_available();

// PTX for `source`, compiled for `arch` (e.g. "sm_90") with -std=c++17 and the extra options,
// not cached: what the model compiler's tests use to prove every printed model compiles.
// Throws hw::Error with NVRTC's log on failure (and "built without NVRTC" without it).
std::string compile_cuda_to_ptx(const std::string& source, const std::string& arch = "sm_90",
                                std::vector<std::string> extra_options = {});

}  // namespace hw::gpu
