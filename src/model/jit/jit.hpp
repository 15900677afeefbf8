// Choosing and building the CellKernel that runs a model.
//
// Why: a model can run three ways — compiled into heartwave at build time (the built-in
// library), compiled at run time by the system C++ compiler into a cached shared library,
// or interpreted (the oracle; slow, but needs nothing). make_kernel picks the fastest that
// works and says which in *how, so a user always knows what ran.
//
// Guarantees:
//   - automatic: a built-in whose printed C++ has the same hash as this model's; else the
//     JIT (cache hit or fresh compile); else the interpreter, with the reason in *how:
//     "interpreter (compiler failed: ...) - 10-30x slower ...: install g++ ...".
//   - compiled: built-in or JIT, or hw::Error with the compiler's log; never interprets.
//   - interpreter: always the interpreter.
//   - The cache ($HEARTWAVE_CACHE, else $XDG_CACHE_HOME/heartwave, else ~/.cache/heartwave)
//     is keyed by SHA-256 of (source, flags, compiler version); files are written to a
//     temporary name and renamed, so concurrent processes never see a partial library.
//   - The shared library stays loaded as long as the kernel that came from it.
//   - The cache is bounded: after each fresh compile the least recently used libraries
//     beyond $HEARTWAVE_CACHE_MAX_MB (default 1024) are deleted, with their sources, and so
//     are temporary files a crashed compile left behind a day ago or more.
// The compiler is $HEARTWAVE_CXX, else "c++".
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cell_kernel.hpp"
#include "model/emit/cell_maths.hpp"
#include "model/ir/model.hpp"

namespace hw::model {

enum class KernelChoice { automatic, interpreter, compiled };

// What a run-time compile builds: the integrators (bit i: hw::cell::Integrator(i)) and
// precisions the caller will use. Fewer compile faster (a 60-state model for every
// integrator in both precisions takes minutes); a kernel asked for one it lacks throws.
// Built-in models have everything.
struct KernelNeeds {
  std::uint32_t integrators = ~0u;
  bool single_precision = true, double_precision = true;
  // Lookup tables of V and fast intrinsics in place of the model's maths (cell_maths.hpp):
  // never a built-in (those are exact), and the interpreter stays exact.
  CellMaths cell_maths;

  // Just these integrators, in one precision.
  static KernelNeeds only(std::initializer_list<hw::cell::Integrator> methods, bool f32) {
    KernelNeeds n;
    n.integrators = 0;
    for (auto m : methods) n.integrators |= 1u << static_cast<int>(m);
    n.single_precision = f32;
    n.double_precision = !f32;
    return n;
  }
};

// Where run-time compiled models find the headers they include, and why there:
// $HEARTWAVE_RUNTIME_INCLUDE where set (the Python package points it at its copy); else
// share/heartwave/include beside the running binary (an installed or copied tree:
// `cmake --install` puts them at P/share/heartwave/include next to P/bin/heartwave); else the
// source tree this build came from. The checks of `heartwave --version` print it.
struct RuntimeHeaders {
  std::string dir;
  std::string source;  // "HEARTWAVE_RUNTIME_INCLUDE", "installed beside the binary", "source tree"
  bool found = false;  // dir holds runtime/cell_kernel.hpp
};
RuntimeHeaders runtime_headers();

std::unique_ptr<hw::cell::CellKernel> make_kernel(const Model& analysed, KernelChoice choice,
                                                  std::string* how = nullptr, const KernelNeeds& needs = {});

// SHA-256 of print_cpp(analysed) with default options: the key that matches a model to a
// built-in (heartwave-modelc records the same hash).
std::string model_cpp_hash(const Model& analysed);

// The cache folder (created on demand by compile_cpp_kernel).
std::string jit_cache_dir();
// $HEARTWAVE_CACHE_MAX_MB (a positive number) in bytes, else 1 GiB.
std::uintmax_t jit_cache_limit_bytes();

// Deletes the least recently used model_<key>.so (and .cpp) and model_cuda_<key>.cubin (and
// .cu, device/compile.hpp) in dir until the libraries
// take at most max_bytes, never `keep`, plus temporaries (*.tmp.*, *.log.*) older than a
// day. A cache hit refreshes the library's modification time, which is what "used" means.
// Returns the bytes freed. Files another process deletes meanwhile are skipped.
std::uintmax_t prune_jit_cache(const std::string& dir, std::uintmax_t max_bytes,
                               const std::string& keep = {});

// The text of the headers generated C++ includes (runtime/cell_kernel.hpp,
// runtime/integrators.hpp, core/error.hpp), as found for the run-time compiler. Anything cached
// from stepping a model (libraries, auto-integrator probes) is keyed on it, so a change to
// the integrators is never answered from a cache filled by an older Heartwave.
std::string runtime_headers_text();
// Their names below the runtime include folder (CMake's HW_RUNTIME_HEADERS).
std::vector<std::string> runtime_header_names();

// The flags the JIT passes to the compiler (besides -I, the source and -o).
std::vector<std::string> jit_compiler_flags();

// Compiles C++ printed by print_cpp (with the factory `factory_symbol`) into the cache, or
// reuses the cached library, and returns its kernel. Throws hw::Error with the compiler's
// output when the compiler is missing or fails. *cached_path receives the library's path.
std::unique_ptr<hw::cell::CellKernel> compile_cpp_kernel(const std::string& source,
                                                         const std::string& factory_symbol,
                                                         std::string* library_path = nullptr);

}  // namespace hw::model
