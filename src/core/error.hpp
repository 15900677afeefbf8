// Errors and located diagnostics.
//
// Two channels (STYLE.md §5): the library's own failures are thrown as hw::Error; problems
// in a user's model or case file are collected as Diagnostics with file:line:col, and a
// front end throws hw::InputError carrying all of them once it has seen enough.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace hw {

struct SourceLoc {
  std::string file;  // empty when unknown
  int line = 0;      // 1-based; 0 = unknown
  int col = 0;       // 1-based; 0 = unknown

  // "file:line:col", "file:line", "file" or "" depending on what is known.
  std::string str() const;
};

enum class Severity { note, warning, error };

struct Diagnostic {
  Severity severity = Severity::error;
  SourceLoc loc;
  std::string message;  // what is wrong and, where possible, what to do
  // A stable name for the kind of problem ("units.dimension"): users and scripts can look
  // it up or filter on it, and a tool can group many of one kind; empty where not given.
  std::string code;

  std::string str() const;  // "file:line:col: error: message"
};

// A failure of the library itself or of a request that cannot be met.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One or more problems in user input (model file, case file, command line).
class InputError : public Error {
 public:
  explicit InputError(std::vector<Diagnostic> diags);
  InputError(SourceLoc loc, const std::string& message);
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }

 private:
  std::vector<Diagnostic> diags_;
};

// Collects diagnostics; throws InputError on demand if any is an error.
class DiagnosticSink {
 public:
  void error(SourceLoc loc, std::string message);
  void warning(SourceLoc loc, std::string message, std::string code = {});
  void note(SourceLoc loc, std::string message, std::string code = {});
  void add(Diagnostic d);
  bool has_errors() const;
  const std::vector<Diagnostic>& all() const { return diags_; }
  // Throws InputError with every diagnostic collected so far if any is an error.
  void throw_if_errors() const;

 private:
  std::vector<Diagnostic> diags_;
};

}  // namespace hw
