#include "device/compile.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "core/error.hpp"
#include "device/embedded.hpp"
#include "core/atomic_file.hpp"
#include "model/jit/jit.hpp"
#include "core/sha256.hpp"

#ifdef HW_HAVE_NVRTC
#include <nvrtc.h>
#endif

namespace hw::gpu {

namespace fs = std::filesystem;

std::vector<std::string> float_kernel_options() { return {"-ftz=true", "-prec-div=false", "-prec-sqrt=false"}; }

#ifdef HW_HAVE_NVRTC

namespace {

struct Program {
  nvrtcProgram prog = nullptr;
  ~Program() {
    if (prog) nvrtcDestroyProgram(&prog);
  }
};

void check(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS) throw Error(std::string("NVRTC: ") + what + ": " + nvrtcGetErrorString(r));
}

std::string log_of(nvrtcProgram p) {
  std::size_t n = 0;
  std::string log;
  if (nvrtcGetProgramLogSize(p, &n) == NVRTC_SUCCESS && n > 1) {
    log.resize(n);
    nvrtcGetProgramLog(p, log.data());
    log.resize(n - 1);
  }
  return log;
}

bool nvrtc_knows(const std::string& arch) {
  int n = 0;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return false;
  std::vector<int> archs(static_cast<std::size_t>(n), 0);
  nvrtcGetSupportedArchs(archs.data());
  const int want = std::stoi(arch.substr(3));
  for (int a : archs)
    if (a == want) return true;
  return false;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

bool nvrtc_available() { return true; }

namespace {

// -default-device: NVRTC takes the closure of a generic lambda inside a device function for
// a host class (and forbids annotating its operator()), so the block loops' lambdas
// (runtime/integrators.hpp, for_each_block) need unannotated functions to mean device ones.
std::vector<std::string> base_options(const std::string& arch) {
  return {"--gpu-architecture=" + arch, "-std=c++17", "-default-device"};
}

}  // namespace

std::string compile_cuda_to_ptx(const std::string& source, const std::string& arch,
                                std::vector<std::string> extra_options) {
  Program p;
  std::vector<const char*> hdr_text, hdr_name;
  for (const auto& [name, text] : embedded_sources()) {
    hdr_name.push_back(name.c_str());
    hdr_text.push_back(text.c_str());
  }
  check(nvrtcCreateProgram(&p.prog, source.c_str(), "heartwave_model.cu", int(hdr_text.size()),
                           hdr_text.data(), hdr_name.data()),
        "create program");
  std::vector<std::string> opts = base_options(arch.empty() ? std::string("sm_90") : arch);
  for (auto& o : extra_options) opts.push_back(std::move(o));
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  const nvrtcResult r = nvrtcCompileProgram(p.prog, static_cast<int>(argv.size()), argv.data());
  if (r != NVRTC_SUCCESS)
    throw Error(std::string("NVRTC compilation failed (") + nvrtcGetErrorString(r) + "):\n" + log_of(p.prog));
  std::size_t size = 0;
  check(nvrtcGetPTXSize(p.prog, &size), "PTX size");
  std::string ptx(size, '\0');
  check(nvrtcGetPTX(p.prog, ptx.data()), "get PTX");
  if (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return fmt::format("{}.{}", major, minor);
}

CompiledImage compile_cuda(const CudaSource& src, const std::string& arch) {
  CompiledImage out;
  // A device newer than this NVRTC gets PTX for the newest arch NVRTC knows; the driver
  // compiles that for the device when the module is loaded.
  const bool cubin = nvrtc_knows(arch);
  out.arch = cubin ? arch : "compute_90";
  std::vector<std::string> opts = base_options(out.arch);
  opts.insert(opts.end(), src.options.begin(), src.options.end());

  // The printed models include runtime/integrators.hpp: a source without headers gets the
  // embedded set.
  const auto& headers = src.headers.empty() ? embedded_sources() : src.headers;
  std::string key_text = src.text;
  for (const auto& [name, text] : headers) key_text += "\n//header " + name + "\n" + text;
  for (const auto& o : opts) key_text += "\n//option " + o;
  key_text += "\n//nvrtc " + nvrtc_version();
  const std::string key = model::sha256_hex(key_text);
  const fs::path dir = model::jit_cache_dir();
  const fs::path image = dir / ("model_cuda_" + key + (cubin ? ".cubin" : ".ptx"));
  out.cache_path = image.string();
  std::error_code ec;
  if (fs::exists(image, ec)) {
    out.image = read_all(image);
    if (!out.image.empty()) {
      fs::last_write_time(image, fs::file_time_type::clock::now(), ec);  // "used" for pruning
      out.from_cache = true;
      return out;
    }
  }

  const auto t0 = std::chrono::steady_clock::now();
  Program p;
  std::vector<const char*> hdr_text, hdr_name;
  for (const auto& [name, text] : headers) {
    hdr_name.push_back(name.c_str());
    hdr_text.push_back(text.c_str());
  }
  check(nvrtcCreateProgram(&p.prog, src.text.c_str(), src.name.c_str(), int(hdr_text.size()),
                           hdr_text.data(), hdr_name.data()),
        "create program");
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  const nvrtcResult r = nvrtcCompileProgram(p.prog, int(argv.size()), argv.data());
  if (r != NVRTC_SUCCESS) {
    // Keep the failing source next to the cache, so the message can say where it is.
    const fs::path kept = dir / ("model_cuda_" + key + ".failed.cu");
    std::string where;
    try {
      io::ensure_directory(dir.string());
      io::write_file_atomic(kept.string(), src.text, false);
      where = " (source kept in " + kept.string() + ")";
    } catch (const Error&) {
    }
    throw Error(fmt::format("NVRTC could not compile the GPU kernels for {} ({}){}:\n{}", out.arch,
                            nvrtcGetErrorString(r), where, log_of(p.prog)));
  }
  std::size_t size = 0;
  if (cubin) {
    check(nvrtcGetCUBINSize(p.prog, &size), "CUBIN size");
    out.image.resize(size);
    check(nvrtcGetCUBIN(p.prog, out.image.data()), "get CUBIN");
  } else {
    check(nvrtcGetPTXSize(p.prog, &size), "PTX size");
    out.image.resize(size);
    check(nvrtcGetPTX(p.prog, out.image.data()), "get PTX");
  }
  out.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  try {
    io::ensure_directory(dir.string());
    io::write_file_atomic(image.string(), out.image, false);
    fs::path cu = image;
    cu.replace_extension(".cu");
    io::write_file_atomic(cu.string(), src.text, false);
    model::prune_jit_cache(dir.string(), model::jit_cache_limit_bytes(), image.string());
  } catch (const std::exception&) {
    // A cache that cannot be written costs a compile next time, nothing else.
  }
  return out;
}

#else

std::string nvrtc_version() { return {}; }

bool nvrtc_available() { return false; }

std::string compile_cuda_to_ptx(const std::string&, const std::string&, std::vector<std::string>) {
  throw Error("cannot compile CUDA: heartwave was built without NVRTC");
}

CompiledImage compile_cuda(const CudaSource&, const std::string&) {
  throw Error("cannot compile GPU kernels: heartwave was built without NVRTC (the CUDA toolkit)");
}

#endif

}  // namespace hw::gpu
