// The bad-input contract, checked end to end through the built CLI.
//
// Every line of tests/errors/cases.tsv is one malformed model file or command line. Each
// must make `heartwave` exit non-zero with a message that names what and where (or, for
// the few inputs that are legal but suspect, exit 0 with a located warning) — never
// crash, abort, hang or leak a file's contents. The CLI is run as a child process (not
// called in-process) because that is the only way to see a crash or an abort as a test
// failure rather than as the death of the whole test binary.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct ErrorCase {
  std::string id;
  std::string command;    // with {CLI}, {DIR}, {TMP} placeholders
  // "input" (1), "usage" (2), "nonzero" (1..123), or "warning": accepted (0) with a located
  // warning on stdout or stderr.
  std::string exit_class;
  std::string must_contain;
  std::string must_not_contain;  // empty: no check
  int line = 0;                  // in cases.tsv, for messages
};

// Keeps gtest from printing the struct as bytes when a case fails.
void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.id; }

const std::string& errors_dir() {
  static const std::string dir = std::string(HW_TEST_DATA_DIR) + "/errors";
  return dir;
}

std::vector<std::string> split_tabs(const std::string& s) {
  std::vector<std::string> out;
  std::string::size_type start = 0;
  while (true) {
    auto tab = s.find('\t', start);
    out.push_back(s.substr(start, tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  return out;
}

// Malformed manifest lines become cases with an empty id so that the check below reports
// them, instead of being skipped silently.
std::vector<ErrorCase> load_cases() {
  std::vector<ErrorCase> cases;
  std::ifstream in(errors_dir() + "/cases.tsv");
  std::string text;
  int line_no = 0;
  while (std::getline(in, text)) {
    ++line_no;
    if (text.empty() || text[0] == '#') continue;
    auto f = split_tabs(text);
    ErrorCase c;
    c.line = line_no;
    if (f.size() >= 4 && f.size() <= 5) {
      c.id = f[0];
      c.command = f[1];
      c.exit_class = f[2];
      c.must_contain = f[3];
      if (f.size() == 5) c.must_not_contain = f[4];
    }
    cases.push_back(c);
  }
  return cases;
}

const std::vector<ErrorCase>& all_cases() {
  static const std::vector<ErrorCase> cases = load_cases();
  return cases;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char ch : s) {
    if (ch == '\'')
      q += "'\\''";
    else
      q += ch;
  }
  return q + "'";
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
  return s;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh folder per case for {TMP} and the captured streams; removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "hw_errors_XXXXXX").string();
    if (char* p = ::mkdtemp(tmpl.data())) path_ = p;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

struct RunResult {
  int exit_code = -1;    // as the shell reports it: 128+N means killed by signal N
  bool shell_died = false;
  std::string out;
  std::string err;
};

// Runs one case under `timeout` (a hang is a failure, reported as exit 124) and with a
// cap on address space (an entity-expansion bomb is a failure, not a frozen machine).
RunResult run_case(const ErrorCase& c, const fs::path& tmp) {
  std::string cmd = replace_all(c.command, "{CLI}", shell_quote(HW_CLI_PATH));
  cmd = replace_all(cmd, "{DIR}", shell_quote(errors_dir()));
  cmd = replace_all(cmd, "{TMP}", shell_quote(tmp.string()));
  const fs::path out = tmp / "stdout.txt";
  const fs::path err = tmp / "stderr.txt";
  const std::string full = "ulimit -v 8388608 2>/dev/null; timeout -k 5 30 " + cmd +
                           " </dev/null >" + shell_quote(out.string()) + " 2>" +
                           shell_quote(err.string());
  RunResult r;
  int status = std::system(("/bin/sh -c " + shell_quote(full)).c_str());
  if (status == -1 || !WIFEXITED(status)) {
    r.shell_died = true;
  } else {
    r.exit_code = WEXITSTATUS(status);
  }
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

class ErrorCaseTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ErrorCaseTest, FailsCleanlyWithALocatedMessage) {
  // Arrange
  const ErrorCase& c = GetParam();
  ASSERT_FALSE(c.id.empty()) << "cases.tsv:" << c.line << " needs 4 or 5 tab-separated fields";
  if (c.command.find("{CLI}") != std::string::npos) {
    struct stat st {};
    ASSERT_EQ(::stat(HW_CLI_PATH, &st), 0) << "the CLI is not built: " << HW_CLI_PATH;
  }
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());

  // Act
  const RunResult r = run_case(c, tmp.path());

  // Assert
  const std::string context = "case " + c.id + " (cases.tsv:" + std::to_string(c.line) +
                              ")\n  command: " + c.command + "\n  exit: " +
                              std::to_string(r.exit_code) + "\n  stderr: " + r.err.substr(0, 2000) +
                              "\n  stdout: " + r.out.substr(0, 500);
  ASSERT_FALSE(r.shell_died) << context;
  EXPECT_NE(r.exit_code, 124) << "timed out (hang or exponential work)\n" << context;
  EXPECT_LT(r.exit_code, 128) << "killed by signal " << (r.exit_code - 128)
                              << " (crash or abort)\n" << context;
  if (c.exit_class == "warning") {
    EXPECT_EQ(r.exit_code, 0) << "expected acceptance with a warning\n" << context;
    EXPECT_NE((r.err + r.out).find(c.must_contain), std::string::npos)
        << "output should contain \"" << c.must_contain << "\"\n" << context;
  } else {
    EXPECT_NE(r.exit_code, 0) << "bad input was accepted\n" << context;
    if (c.exit_class == "input") {
      EXPECT_EQ(r.exit_code, 1) << "expected the input-error exit code 1\n" << context;
    } else if (c.exit_class == "usage") {
      EXPECT_EQ(r.exit_code, 2) << "expected the usage exit code 2\n" << context;
    } else {
      EXPECT_EQ(c.exit_class, "nonzero") << "unknown exit class in cases.tsv";
    }
    EXPECT_NE(r.err.find(c.must_contain), std::string::npos)
        << "stderr should contain \"" << c.must_contain << "\"\n" << context;
  }
  if (!c.must_not_contain.empty()) {
    EXPECT_EQ(r.err.find(c.must_not_contain), std::string::npos)
        << "stderr must not contain \"" << c.must_not_contain << "\"\n" << context;
    EXPECT_EQ(r.out.find(c.must_not_contain), std::string::npos)
        << "stdout must not contain \"" << c.must_not_contain << "\"\n" << context;
  }
}

std::string case_name(const ::testing::TestParamInfo<ErrorCase>& info) {
  std::string name = info.param.id.empty() ? "malformed_line_" + std::to_string(info.param.line)
                                           : info.param.id;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Manifest, ErrorCaseTest, ::testing::ValuesIn(all_cases()), case_name);

// The manifest itself: enough cases, unique ids, and every input it names present, so a
// renamed file cannot turn a case into a vacuous "file not found" pass.
TEST(ErrorManifest, IsWellFormed) {
  const auto& cases = all_cases();
  EXPECT_GE(cases.size(), 45u);
  std::set<std::string> ids;
  for (const auto& c : cases) {
    EXPECT_TRUE(ids.insert(c.id).second) << "duplicate id " << c.id;
    EXPECT_FALSE(c.must_contain.empty()) << c.id << ": an empty substring checks nothing";
    std::istringstream words(c.command);
    std::string w;
    while (words >> w) {
      if (w.rfind("{DIR}/", 0) != 0 || w.find("does_not_exist") != std::string::npos) continue;
      EXPECT_TRUE(fs::exists(errors_dir() + w.substr(5))) << c.id << ": missing " << w;
    }
  }
}

}  // namespace
