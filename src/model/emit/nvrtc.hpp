// Compiling printed CUDA to PTX with NVRTC, at run time and without a GPU.
//
// Why here and not in a GPU backend: compiling is what the model compiler must prove works
// for every model (tests compile the CUDA of every model); running it is the GPU
// backend's job. Built without NVRTC (HW_HAVE_NVRTC undefined), the function still links
// and throws hw::Error("... built without NVRTC"), so callers need no #ifdef.
#pragma once

#include <string>
#include <vector>

namespace hw::model {

// True when this build can compile CUDA (callers and tests use it to skip politely).
bool nvrtc_available();

// PTX for `source`, compiled for `arch` (e.g. "sm_90") with -std=c++17 and the extra
// options. Throws hw::Error with NVRTC's log on failure.
std::string compile_cuda_to_ptx(const std::string& source, const std::string& arch = "sm_90",
                                std::vector<std::string> extra_options = {});

}  // namespace hw::model
