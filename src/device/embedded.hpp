// The device-side headers heartwave hands to NVRTC (kernels/stencil_k.hpp and friends),
// built into the binary so an installed heartwave needs no source tree to compile kernels.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace hw::gpu {

// (include name, text), e.g. ("kernels/stencil_k.hpp", "...").
const std::vector<std::pair<std::string, std::string>>& embedded_sources();

// The source with each `#include "X"` of an embedded X replaced by X's text, so that a
// printed CUDA file compiles with nvcc on its own (heartwave model compile --target cuda).
std::string inline_embedded_includes(const std::string& source);

}  // namespace hw::gpu
