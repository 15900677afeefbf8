#include "parallel/competing_load.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::par {

namespace {

// The child: plain arithmetic until the deadline, nothing shared with the parent (it was
// forked from a process that may hold OpenMP threads; it calls nothing that locks).
[[noreturn]] void spin(double max_seconds, int cpu) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (cpu >= 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof(one), &one);
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(max_seconds);
  volatile double x = 1.0;
  while (std::chrono::steady_clock::now() < end)
    for (int i = 0; i < 100000; ++i) x = x * 1.0000001 + 1e-9;
  _exit(0);
}

}  // namespace

CompetingLoad::CompetingLoad(int processes, double max_seconds, bool pinned) {
  std::vector<int> cpus;
  if (pinned) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
      for (int c = CPU_SETSIZE - 1; c >= 0; --c)
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  for (int i = 0; i < processes; ++i) {
    const int cpu = cpus.empty() ? -1 : cpus[std::size_t(i) % cpus.size()];
    const pid_t pid = fork();
    if (pid < 0) {
      const int err = errno;
      stop();
      throw Error(fmt::format("could not start a competing process for the load benchmark: {}",
                              std::strerror(err)));
    }
    if (pid == 0) spin(max_seconds, cpu);
    children_.push_back(pid);
  }
}

CompetingLoad::~CompetingLoad() { stop(); }

void CompetingLoad::stop() {
  for (const pid_t pid : children_) kill(pid, SIGKILL);
  for (const pid_t pid : children_) waitpid(pid, nullptr, 0);
  children_.clear();
}

}  // namespace hw::par
