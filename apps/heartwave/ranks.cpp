#include "ranks.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "comm/world.hpp"
#include "core/error.hpp"

namespace hw::cli {

std::vector<std::string> g_argv;
bool g_agreed_exit = false;

namespace {

// mpirun from HEARTWAVE_MPIRUN, else the first on PATH (mpirun, then mpiexec).
std::string find_mpirun() {
  if (const char* e = std::getenv("HEARTWAVE_MPIRUN"); e && *e) return e;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (const char* name : {"mpirun", "mpiexec"}) {
    std::size_t a = 0;
    while (a <= dirs.size()) {
      const std::size_t b = std::min(dirs.find(':', a), dirs.size());
      const std::filesystem::path p = std::filesystem::path(dirs.substr(a, b - a)) / name;
      if (::access(p.c_str(), X_OK) == 0) return p.string();
      a = b + 1;
    }
  }
  return "";
}

// HEARTWAVE_EXE first: where heartwave runs through a wrapper (tools/device/unpack.sh starts
// it with a carried loader, so /proc/self/exe names the loader).
std::string self_executable() {
  if (const char* e = std::getenv("HEARTWAVE_EXE"); e && *e) return e;
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? g_argv.at(0) : p.string();
}

}  // namespace

int launch_ranks(int ranks) {
  if (!comm::built_with_mpi())
    throw Error(fmt::format("--ranks {}: this heartwave was built without MPI; install libopenmpi-dev and "
                            "openmpi-bin (tools/setup.sh) and build again, or leave --ranks out",
                            ranks));
  const std::string mpirun = find_mpirun();
  if (mpirun.empty())
    throw Error(fmt::format("--ranks {}: no mpirun on PATH; install openmpi-bin (or set HEARTWAVE_MPIRUN to "
                            "the launcher), or leave --ranks out",
                            ranks));
  std::vector<std::string> args{mpirun, "-np", std::to_string(ranks)};
  // Open MPI refuses more ranks than cores, and root, unless told; a workstation user asked
  // for this many ranks on this machine.
  if (unsigned(ranks) > std::thread::hardware_concurrency()) args.push_back("--oversubscribe");
  if (::geteuid() == 0) args.push_back("--allow-run-as-root");
  args.push_back(self_executable());
  for (std::size_t i = 1; i < g_argv.size(); ++i) {
    const std::string& a = g_argv[i];
    if (a == "--ranks") {
      ++i;  // and its value
      continue;
    }
    if (a.rfind("--ranks=", 0) == 0) continue;
    args.push_back(a);
  }
  std::vector<char*> cargv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  // Ctrl-C reaches mpirun too (one process group), which passes it to the ranks: they
  // checkpoint and stop (exit 130). This process waits for that instead of leaving first.
  struct sigaction ignore {}, old_int {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &old_int);
  const pid_t pid = ::fork();
  if (pid < 0) throw Error("--ranks: cannot start mpirun (fork failed)");
  if (pid == 0) {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::execv(mpirun.c_str(), cargv.data());
    std::_Exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  if (WIFEXITED(status)) {
    if (WEXITSTATUS(status) == 127) throw Error(fmt::format("--ranks: could not run {}", mpirun));
    return WEXITSTATUS(status);
  }
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace hw::cli
