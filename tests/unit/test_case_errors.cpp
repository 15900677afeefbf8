// The bad-input contract of `heartwave run`, end to end through the built CLI.
//
// Every line of tests/errors/case_errors.tsv is one malformed case file (tests/errors/cases/)
// or command line. Each must exit with the input (1) or usage (2) code and a message that
// names the key and, for file problems, file:line — before any work, quickly, and never by
// a crash. The CLI runs as a child process (in a fresh folder, under timeout and a memory
// cap) so that a crash is a test failure rather than the death of the test binary.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct CaseError {
  std::string id, command, exit_class, must_contain;
  int line = 0;
};

void PrintTo(const CaseError& c, std::ostream* os) { *os << c.id; }

std::string cases_dir() { return std::string(HW_TEST_DATA_DIR) + "/errors/cases"; }

std::vector<CaseError> load() {
  std::vector<CaseError> out;
  std::ifstream in(std::string(HW_TEST_DATA_DIR) + "/errors/case_errors.tsv");
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty() || text[0] == '#') continue;
    std::vector<std::string> f;
    std::string::size_type start = 0;
    while (true) {
      auto tab = text.find('\t', start);
      f.push_back(text.substr(start, tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    CaseError c;
    c.line = line;
    if (f.size() == 4) c = {f[0], f[1], f[2], f[3], line};
    out.push_back(c);
  }
  return out;
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class CaseErrorTest : public ::testing::TestWithParam<CaseError> {};

TEST_P(CaseErrorTest, FailsBeforeAnyWorkWithALocatedMessage) {
  // Arrange
  const CaseError& c = GetParam();
  ASSERT_FALSE(c.id.empty()) << "case_errors.tsv:" << c.line << " needs 4 tab-separated fields";
  struct stat st {};
  ASSERT_EQ(::stat(HW_CLI_PATH, &st), 0) << "the CLI is not built: " << HW_CLI_PATH;
  std::string tmpl = (fs::temp_directory_path() / "hw_case_err_XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const fs::path tmp = tmpl;
  std::string cmd = replace_all(c.command, "{CLI}", quote(HW_CLI_PATH));
  cmd = replace_all(cmd, "{DIR}", quote(cases_dir()));
  cmd = replace_all(cmd, "{TMP}", quote(tmp.string()));

  // Act
  const std::string full = "cd " + quote(tmp.string()) + " && ulimit -v 8388608 2>/dev/null; timeout -k 5 30 " +
                           cmd + " </dev/null >stdout.txt 2>stderr.txt";
  const int status = std::system(("/bin/sh -c " + quote(full)).c_str());
  const std::string err = slurp(tmp / "stderr.txt"), out = slurp(tmp / "stdout.txt");
  const bool made_outputs = fs::exists(tmp / ("out_" + c.id));
  std::error_code ec;
  fs::remove_all(tmp, ec);

  // Assert
  ASSERT_TRUE(WIFEXITED(status));
  const int rc = WEXITSTATUS(status);
  const std::string ctx = c.id + " (case_errors.tsv:" + std::to_string(c.line) + ")\n  command: " + c.command +
                          "\n  exit: " + std::to_string(rc) + "\n  stderr: " + err.substr(0, 1500) +
                          "\n  stdout: " + out.substr(0, 300);
  EXPECT_NE(rc, 124) << "timed out\n" << ctx;
  EXPECT_LT(rc, 128) << "killed by a signal (crash)\n" << ctx;
  EXPECT_EQ(rc, c.exit_class == "usage" ? 2 : 1) << ctx;
  EXPECT_NE(err.find(c.must_contain), std::string::npos) << "stderr should contain \"" << c.must_contain << "\"\n" << ctx;
  EXPECT_FALSE(made_outputs) << "outputs were written for bad input\n" << ctx;
}

INSTANTIATE_TEST_SUITE_P(RunCli, CaseErrorTest, ::testing::ValuesIn(load()),
                         [](const ::testing::TestParamInfo<CaseError>& i) {
                           std::string n = i.param.id.empty() ? "line" + std::to_string(i.param.line) : i.param.id;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(CaseErrors, ManifestHasAtLeastFortyCases) { EXPECT_GE(load().size(), 40u); }

}  // namespace
