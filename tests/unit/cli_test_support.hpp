// Helpers shared by the tests that drive the built heartwave binary end to end
// (test_cli, test_check_inspect, test_steady_cli, test_run_cli, test_run_cli_folders,
// test_study_interrupt). Each of those files used to carry its own copy of these: reading a
// file whole, running the CLI and capturing its exit code and output, a fresh temporary
// folder per test, the same small Aliev-Panfilov sheet case, and a script that stops a
// background run with SIGINT. They live here once so the copies cannot drift apart; where
// the copies differed (which streams are captured, the time limit, the case's [output]
// table) the difference is a parameter. Header-only: every function is inline.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>

namespace hw::cli_test {

namespace fs = std::filesystem;

// The whole file as bytes ("" when it cannot be read).
inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// A path in the system's temporary folder: prefix + name.
inline std::string temp_file(const std::string& prefix, const std::string& name) {
  return (fs::temp_directory_path() / (prefix + name)).string();
}

// The exit code of a std::system or pclose status; -1 when the command did not exit.
inline int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

struct CliRun {
  int code = -1;
  std::string out;  // the captured stream(s)
};

// Which of the CLI's streams cli() captures; the others are discarded.
enum class Capture { out, err, both };

// Runs the CLI with arguments (shell syntax) in the current folder.
inline CliRun cli(const std::string& args, Capture what) {
  CliRun r;
  const char* redirect = what == Capture::out ? " 2>/dev/null" : what == Capture::err ? " 2>&1 >/dev/null" : " 2>&1";
  const std::string cmd = std::string(HW_CLI_PATH) + " " + args + redirect;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  r.code = exit_code(pclose(p));
  return r;
}

// Shell lines for run_then_sigint: wait `seconds`.
inline std::string wait_seconds(double seconds) {
  std::ostringstream s;
  s << "sleep " << seconds << "\n";
  return s.str();
}

// Shell lines for run_then_sigint: wait until `file` exists, the run has ended, or about 15 s.
inline std::string wait_for_file(const std::string& file) {
  return "n=0\nwhile [ ! -e " + file +
         " ] && kill -0 $pid 2>/dev/null && [ $n -lt 3000 ]; do\n  sleep 0.005; n=$((n+1))\ndone\n";
}

// Runs the CLI with `args` (redirections included) in the background in `dir`, waits as the
// shell lines `wait` say (wait_seconds, wait_for_file), sends SIGINT and returns the exit code.
inline int run_then_sigint(const fs::path& dir, const std::string& args, const std::string& wait) {
  std::ofstream(dir / "stop.sh") << "cd '" << dir.string() << "'\n'" << HW_CLI_PATH << "' " << args << " &\npid=$!\n"
                                 << wait << "kill -INT $pid 2>/dev/null; wait $pid\n";
  return exit_code(std::system(("bash '" + (dir / "stop.sh").string() + "'").c_str()));
}

// A square Aliev-Panfilov sheet of n x n cells (spacing 0.5) excited along its left edge,
// run to t_end ms; `output` is the body of its [output] table.
inline std::string aliev_panfilov_sheet(const std::string& name, int n, int t_end, const std::string& output) {
  std::ostringstream s;
  s << "name = \"" << name << "\"\n[grid]\nsize = [" << n << ", " << n
    << "]\nspacing = 0.5\n[conductivity]\ndiffusivity = 1.0\n[[model]]\nname = \"aliev_panfilov_1996\"\n"
       "[[initial]]\nregion = { lo = [0, 0], hi = [2, "
    << n / 2 << "] }\nvariable = \"V\"\nvalue = 1.0\n[time]\ndt = 0.05\nt_end = " << t_end << "\n[output]\n"
    << output;
  return s.str();
}

// "tiny.toml" of the run tests: a 20 x 20 sheet run for 4 ms; `output` is its [output] table.
inline std::string tiny_sheet(const std::string& output) { return aliev_panfilov_sheet("tiny", 20, 4, output); }

// "beat.toml" of the SIGINT tests: a 40 x 40 sheet run for 150 ms, long enough for whole
// beats (finite APD90), with fields every 20 ms, a probe, activation and APD maps and an
// electrode; `first_output_lines` go first in its [output] table (e.g. its directory).
inline std::string beat_sheet(const std::string& first_output_lines = "") {
  return aliev_panfilov_sheet("beat", 40, 150, first_output_lines + R"(field_interval = 20
probes = [{ name = "mid", position = [10, 10] }]
probe_interval = 0.5
activation_map = true
activation_threshold = 0.5
apd_map = true
electrodes = [{ name = "e1", position = [30, 10] }]
)");
}

// A fresh temporary folder per test (dir_, removed afterwards) and the CLI run inside it.
// The fixtures derive from it, naming the folder's prefix, the time limit of one run,
// whether stderr is kept apart (err_) or joined to stdout (out_), and the text of the
// folder's tiny.toml (none when empty).
class CliFolderTest : public ::testing::Test {
 protected:
  CliFolderTest(std::string prefix, int timeout_s, bool separate_stderr, std::string tiny_toml = {})
      : prefix_(std::move(prefix)),
        timeout_s_(timeout_s),
        separate_stderr_(separate_stderr),
        tiny_toml_(std::move(tiny_toml)) {}
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / (prefix_ + "XXXXXX")).string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    if (!tiny_toml_.empty()) std::ofstream(dir_ / "tiny.toml") << tiny_toml_;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Runs the CLI in dir_ with args; returns the exit code, output in out_ (and err_).
  int run(const std::string& args) {
    const std::string cmd = "cd '" + dir_.string() + "' && timeout " + std::to_string(timeout_s_) + " '" +
                            HW_CLI_PATH + "' " + args + (separate_stderr_ ? " > out.txt 2> err.txt" : " > out.txt 2>&1");
    const int status = std::system(cmd.c_str());
    out_ = slurp(dir_ / "out.txt");
    if (separate_stderr_) err_ = slurp(dir_ / "err.txt");
    return exit_code(status);
  }
  fs::path dir_;
  std::string out_, err_;

 private:
  std::string prefix_;
  int timeout_s_;
  bool separate_stderr_;
  std::string tiny_toml_;
};

}  // namespace hw::cli_test
