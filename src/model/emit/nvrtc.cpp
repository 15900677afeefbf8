#include "model/emit/nvrtc.hpp"

#include "core/error.hpp"

#ifdef HW_HAVE_NVRTC
#include <nvrtc.h>
#endif

namespace hw::model {

#ifdef HW_HAVE_NVRTC

bool nvrtc_available() { return true; }

namespace {
// Owns an nvrtcProgram so every exit path destroys it.
struct Program {
  nvrtcProgram prog = nullptr;
  ~Program() {
    if (prog) nvrtcDestroyProgram(&prog);
  }
};

void check(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS)
    throw Error(std::string("NVRTC: ") + what + ": " + nvrtcGetErrorString(r));
}
}  // namespace

std::string compile_cuda_to_ptx(const std::string& source, const std::string& arch,
                                std::vector<std::string> extra_options) {
  Program p;
  check(nvrtcCreateProgram(&p.prog, source.c_str(), "heartwave_model.cu", 0, nullptr, nullptr),
        "create program");
  std::vector<std::string> opts = {"--gpu-architecture=" + (arch.empty() ? std::string("sm_90") : arch),
                                   "-std=c++17"};
  for (auto& o : extra_options) opts.push_back(std::move(o));
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  const nvrtcResult r = nvrtcCompileProgram(p.prog, static_cast<int>(argv.size()), argv.data());
  if (r != NVRTC_SUCCESS) {
    std::size_t log_size = 0;
    std::string log;
    if (nvrtcGetProgramLogSize(p.prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
      log.resize(log_size);
      nvrtcGetProgramLog(p.prog, log.data());
      log.resize(log_size - 1);
    }
    throw Error(std::string("NVRTC compilation failed (") + nvrtcGetErrorString(r) + "):\n" + log);
  }
  std::size_t size = 0;
  check(nvrtcGetPTXSize(p.prog, &size), "PTX size");
  std::string ptx(size, '\0');
  check(nvrtcGetPTX(p.prog, ptx.data()), "get PTX");
  if (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

#else

bool nvrtc_available() { return false; }

std::string compile_cuda_to_ptx(const std::string&, const std::string&, std::vector<std::string>) {
  throw Error("cannot compile CUDA: heartwave was built without NVRTC");
}

#endif

}  // namespace hw::model
