#include "model/jit/jit.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <sstream>

#include "core/error.hpp"
#include "model/emit/cpp_printer.hpp"
#include "model/passes/tabulate.hpp"
#include "model/emit/interpreter.hpp"
#include "model/jit/builtin_registry.hpp"
#include "core/sha256.hpp"


extern char** environ;

namespace hw::model {

namespace fs = std::filesystem;
using hw::cell::CellKernel;

namespace {

// Delegates to a kernel and owns what must outlive it (the dlopen handle).
class HeldKernel final : public CellKernel {
 public:
  HeldKernel(std::shared_ptr<void> handle, std::unique_ptr<CellKernel> inner, std::string what)
      : handle_(std::move(handle)), inner_(std::move(inner)), what_(std::move(what)) {}

  std::string describe() const override { return what_; }
  int n_states() const override { return inner_->n_states(); }
  int n_params() const override { return inner_->n_params(); }
  int n_constants() const override { return inner_->n_constants(); }
  int n_algebraics() const override { return inner_->n_algebraics(); }
  bool is_gate(int i) const override { return inner_->is_gate(i); }
  bool external_voltage(int k) const override { return inner_->external_voltage(k); }
  void step(hw::cell::Integrator m, double t, double dt, int steps,
            const hw::cell::Batch<double>& b) const override {
    inner_->step(m, t, dt, steps, b);
  }
  void step(hw::cell::Integrator m, float t, float dt, int steps,
            const hw::cell::Batch<float>& b) const override {
    inner_->step(m, t, dt, steps, b);
  }
  void constants(const double* p, double* c) const override { inner_->constants(p, c); }
  void rhs_jac(double t, const double* y, const double* p, const double* c, double* dydt,
               double* jdiag) const override {
    inner_->rhs_jac(t, y, p, c, dydt, jdiag);
  }
  void algebraics(double t, const double* y, const double* p, const double* c,
                  double* out) const override {
    inner_->algebraics(t, y, p, c, out);
  }

 private:
  std::shared_ptr<void> handle_;  // declared first: destroyed after inner_
  std::unique_ptr<CellKernel> inner_;
  std::string what_;
};

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// The generated C++'s include directory (jit.hpp, runtime_headers, says where and why).
std::string runtime_include_dir() { return runtime_headers().dir; }

std::string compiler() {
  const std::string c = env("HEARTWAVE_CXX");
  return c.empty() ? "c++" : c;
}

// Runs argv (PATH lookup, no shell) with stdout and stderr into log_path. Returns the exit
// status, or -1 with the reason in *why when the program could not be started.
int run_process(const std::vector<std::string>& argv, const std::string& log_path,
                std::string* why) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int err = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err != 0) {
    if (why) *why = "cannot run '" + argv[0] + "': " + std::strerror(err);
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      if (why) *why = "waitpid failed";
      return -1;
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (why) *why = "'" + argv[0] + "' was killed by a signal";
  return -1;
}

std::string read_file(const fs::path& p, std::size_t max = 1 << 20) {
  std::ifstream in(p, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (s.size() > max) s.resize(max);
  return s;
}

// A name no other thread or process uses for its temporary files.
std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  return std::to_string(::getpid()) + "." + std::to_string(counter++) + "." +
         std::to_string(rd());
}

void write_atomically(const fs::path& target, const std::string& text) {
  const fs::path tmp = target.string() + ".tmp." + unique_suffix();
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) throw Error("cannot write " + tmp.string());
  }
  fs::rename(tmp, target);
}

// "c++ --version", first line; once per compiler per process.
std::string compiler_version(const std::string& cxx, const fs::path& dir) {
  static std::mutex mu;
  static std::map<std::string, std::string> known;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = known.find(cxx); it != known.end()) return it->second;
  const fs::path log = dir / ("version." + unique_suffix() + ".log");
  std::string why;
  const int rc = run_process({cxx, "--version"}, log.string(), &why);
  std::string text = rc == 0 ? read_file(log, 4096) : std::string();
  std::error_code ec;
  fs::remove(log, ec);
  if (rc != 0) throw Error(why.empty() ? "'" + cxx + " --version' failed" : why);
  text = text.substr(0, text.find('\n'));
  known[cxx] = text;
  return text;
}

std::unique_ptr<CellKernel> load_library(const fs::path& so, const std::string& factory_symbol,
                                         std::string* why) {
  void* h = ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    if (why) *why = std::string("dlopen: ") + ::dlerror();
    return nullptr;
  }
  std::shared_ptr<void> handle(h, [](void* p) { ::dlclose(p); });
  using Factory = CellKernel* (*)();
  auto factory = reinterpret_cast<Factory>(::dlsym(h, factory_symbol.c_str()));
  if (!factory) {
    if (why) *why = "dlsym: no symbol " + factory_symbol + " in " + so.string();
    return nullptr;
  }
  std::unique_ptr<CellKernel> inner(factory());
  return std::make_unique<HeldKernel>(std::move(handle), std::move(inner),
                                      "compiled C++ (cached: " + so.string() + ")");
}

std::unique_ptr<CellKernel> from_builtin(const Model& m, const std::string& hash) {
  for (const BuiltinModel& b : builtin_models())
    if (b.cpp_hash == hash && b.make_kernel)
      return std::make_unique<HeldKernel>(nullptr, std::unique_ptr<CellKernel>(b.make_kernel()),
                                          "compiled C++ (built-in " + b.name + ")");
  return nullptr;
}

std::unique_ptr<CellKernel> interpreter(const Model& m) { return make_interpreter(m); }

}  // namespace

std::vector<std::string> runtime_header_names() {
  std::vector<std::string> names;
  std::string_view list = HW_RUNTIME_HEADERS;
  for (std::size_t a = 0; a <= list.size();) {
    const std::size_t b = std::min(list.find(',', a), list.size());
    if (b > a) names.emplace_back(list.substr(a, b - a));
    a = b + 1;
  }
  return names;
}

std::string runtime_headers_text() {
  std::string text;
  for (const std::string& name : runtime_header_names()) {
    std::ifstream in(fs::path(runtime_include_dir()) / name, std::ios::binary);
    text += "//header " + name + "\n";
    text.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return text;
}

std::uintmax_t jit_cache_limit_bytes() {
  const std::string v = env("HEARTWAVE_CACHE_MAX_MB");
  char* end = nullptr;
  const double mb = v.empty() ? 0 : std::strtod(v.c_str(), &end);
  if (mb > 0 && end && *end == '\0') return std::uintmax_t(mb * 1024 * 1024);
  return std::uintmax_t(1024) * 1024 * 1024;
}

std::string jit_cache_dir() {
  if (std::string d = env("HEARTWAVE_CACHE"); !d.empty()) return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/heartwave";
  if (std::string d = env("HOME"); !d.empty()) return d + "/.cache/heartwave";
  return (fs::temp_directory_path() / "heartwave-cache").string();
}

// -fno-trapping-math changes no value (nothing here unmasks FP exceptions); it lets GCC
// if-convert the selects of the cell step and expand floor inline, so the cell loop
// vectorises.
// -march=native as in the build (CMake option HW_NATIVE): the kernel runs where it compiles.
std::vector<std::string> jit_compiler_flags() {
  std::vector<std::string> f = {"-std=c++20",       "-O3",           "-fPIC",
                                "-shared",          "-fopenmp-simd", "-fno-math-errno",
                                "-fno-trapping-math"};
#ifdef HW_NATIVE_ARCH
  f.push_back("-march=native");
#endif
  return f;
}

std::string model_cpp_hash(const Model& analysed) { return sha256_hex(print_cpp(analysed)); }

std::uintmax_t prune_jit_cache(const std::string& dir, std::uintmax_t max_bytes,
                               const std::string& keep) {
  struct Entry {
    fs::path so;
    fs::file_time_type used;
    std::uintmax_t bytes;
  };
  std::vector<Entry> libs;
  std::uintmax_t freed = 0;
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path p = it->path();
    const std::string name = p.filename().string();
    if (name.rfind("model_", 0) != 0) continue;
    std::error_code e2;
    const auto when = fs::last_write_time(p, e2);
    const auto bytes = fs::file_size(p, e2);
    if (e2) continue;
    const bool temporary = name.find(".tmp.") != std::string::npos || name.find(".log.") != std::string::npos;
    if (temporary) {
      if (now - when > std::chrono::hours(24) && fs::remove(p, e2)) freed += bytes;
    } else if (p.extension() == ".so" || p.extension() == ".cubin") {  // cubins: device/compile
      libs.push_back({p, when, bytes});
    }
  }
  std::sort(libs.begin(), libs.end(), [](const Entry& a, const Entry& b) { return a.used > b.used; });
  std::uintmax_t total = 0;
  for (const Entry& e : libs) {
    total += e.bytes;
    if (total <= max_bytes || e.so == fs::path(keep)) continue;
    std::error_code e2;
    if (fs::remove(e.so, e2)) freed += e.bytes;
    fs::path cpp = e.so;
    cpp.replace_extension(e.so.extension() == ".cubin" ? ".cu" : ".cpp");
    const auto cpp_bytes = fs::file_size(cpp, e2);
    if (!e2 && fs::remove(cpp, e2)) freed += cpp_bytes;
  }
  return freed;
}

std::unique_ptr<CellKernel> compile_cpp_kernel(const std::string& source,
                                               const std::string& factory_symbol,
                                               std::string* library_path) {
  const fs::path dir = jit_cache_dir();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("cannot create the model cache " + dir.string() + ": " + ec.message());

  const std::string cxx = compiler();
  const std::vector<std::string> flags = jit_compiler_flags();
  std::string key_text = source + "\n--\n" + cxx + "\n" + compiler_version(cxx, dir) + "\n" +
                         runtime_include_dir() + "\n" + runtime_headers_text();
  for (const auto& f : flags) key_text += f + "\n";
  const std::string key = sha256_hex(key_text);
  const fs::path so = dir / ("model_" + key + ".so");
  if (library_path) *library_path = so.string();

  std::string why;
  if (fs::exists(so)) {
    if (auto k = load_library(so, factory_symbol, &why)) {
      fs::last_write_time(so, fs::file_time_type::clock::now(), ec);  // used: keep it longest
      return k;
    }
    fs::remove(so, ec);  // unreadable or stale: rebuild it below
  }

  const std::string tmp = unique_suffix();
  const fs::path cpp = dir / ("model_" + key + ".cpp");
  const fs::path tmp_so = dir / ("model_" + key + ".so.tmp." + tmp);
  const fs::path log = dir / ("model_" + key + ".log." + tmp);
  write_atomically(cpp, source);
  std::vector<std::string> argv = {cxx};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("-I" + runtime_include_dir());
  argv.push_back(cpp.string());
  argv.push_back("-o");
  argv.push_back(tmp_so.string());
  const int rc = run_process(argv, log.string(), &why);
  const std::string output = read_file(log, 8000);
  fs::remove(log, ec);
  if (rc != 0) {
    fs::remove(tmp_so, ec);
    throw Error(why.empty() ? "'" + cxx + "' exited with status " + std::to_string(rc) +
                                  " compiling " + cpp.string() + ":\n" + output
                            : why);
  }
  fs::rename(tmp_so, so, ec);
  if (ec) throw Error("cannot move the compiled model into the cache: " + ec.message());
  prune_jit_cache(dir.string(), jit_cache_limit_bytes(), so.string());
  if (auto k = load_library(so, factory_symbol, &why)) return k;
  throw Error("cannot load the compiled model: " + why);
}

RuntimeHeaders runtime_headers() {
  const auto holds = [](const fs::path& d) {
    std::error_code ec;
    return fs::exists(d / "runtime" / "cell_kernel.hpp", ec);
  };
  if (const std::string e = env("HEARTWAVE_RUNTIME_INCLUDE"); !e.empty())
    return {e, "HEARTWAVE_RUNTIME_INCLUDE", holds(e)};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = (exe.parent_path() / ".." / "share" / "heartwave" / "include").lexically_normal();
    if (holds(installed)) return {installed.string(), "installed beside the binary", true};
  }
  return {HW_RUNTIME_INCLUDE_DIR, "source tree", holds(HW_RUNTIME_INCLUDE_DIR)};
}

std::unique_ptr<CellKernel> make_kernel(const Model& analysed, KernelChoice choice,
                                        std::string* how, const KernelNeeds& needs) {
  const auto say = [how](const std::string& s) {
    if (how) *how = s;
  };
  if (choice == KernelChoice::interpreter) {
    auto k = interpreter(analysed);
    say("interpreter");
    return k;
  }
  if (!needs.cell_maths.exact()) {
    const Tabulation tables = needs.cell_maths.tables ? tabulate_voltage_functions(analysed) : Tabulation{};
    CppOptions opt;
    opt.integrators = needs.integrators;
    opt.single_precision = needs.single_precision;
    opt.double_precision = needs.double_precision;
    opt.tables = &tables;
    opt.fast_intrinsics = needs.cell_maths.fast;
    try {
      auto k = compile_cpp_kernel(print_cpp(analysed, opt), cpp_factory_symbol(opt));
      std::string what = k->describe();
      if (needs.cell_maths.tables)
        what += tables.empty() ? " (no lookup tables: " + tables.not_tabulated + ")"
                               : ", " + std::to_string(tables.functions.size()) + " functions of V from lookup tables";
      if (needs.cell_maths.fast)
        what += needs.single_precision ? ", the GPU's fast intrinsics emulated in float"
                                       : " (fast intrinsics: float only, this kernel is double)";
      say(what);
      return k;
    } catch (const Error&) {
      if (choice == KernelChoice::compiled) throw;
    }
  }
  const std::string source = print_cpp(analysed);
  if (auto k = from_builtin(analysed, sha256_hex(source))) {
    say(k->describe());
    return k;
  }
  try {
    CppOptions subset;
    subset.integrators = needs.integrators;
    subset.single_precision = needs.single_precision;
    subset.double_precision = needs.double_precision;
    auto k = compile_cpp_kernel(subset.all() ? source : print_cpp(analysed, subset), cpp_factory_symbol(subset));
    say(k->describe());
    return k;
  } catch (const Error& e) {
    if (choice == KernelChoice::compiled) throw;
    std::string reason = e.what();
    if (reason.size() > 300) reason = reason.substr(0, 300) + "...";
    auto k = interpreter(analysed);
    say("interpreter (compiler failed: " + reason +
        ") - 10-30x slower than compiled C++: install g++ (Debian: apt install g++) or set HEARTWAVE_CXX to a "
        "C++ compiler; `heartwave --version` says where the run-time headers are");
    return k;
  }
}

}  // namespace hw::model
