#include "core/error.hpp"

namespace hw {

std::string SourceLoc::str() const {
  std::string s = file;
  if (line > 0) {
    s += (s.empty() ? "line " : ":") + std::to_string(line);
    if (col > 0) s += ":" + std::to_string(col);
  }
  return s;
}

std::string Diagnostic::str() const {
  const char* level = severity == Severity::error     ? "error"
                      : severity == Severity::warning ? "warning"
                                                      : "note";
  std::string where = loc.str();
  return (where.empty() ? "" : where + ": ") + level + ": " + message;
}

static std::string join(const std::vector<Diagnostic>& diags) {
  std::string s;
  for (const auto& d : diags) {
    if (!s.empty()) s += "\n";
    s += d.str();
  }
  return s;
}

InputError::InputError(std::vector<Diagnostic> diags)
    : Error(join(diags)), diags_(std::move(diags)) {}

InputError::InputError(SourceLoc loc, const std::string& message)
    : InputError(std::vector<Diagnostic>{{Severity::error, std::move(loc), message, {}}}) {}

void DiagnosticSink::error(SourceLoc loc, std::string message) {
  diags_.push_back({Severity::error, std::move(loc), std::move(message), {}});
}
void DiagnosticSink::warning(SourceLoc loc, std::string message, std::string code) {
  diags_.push_back({Severity::warning, std::move(loc), std::move(message), std::move(code)});
}
void DiagnosticSink::note(SourceLoc loc, std::string message, std::string code) {
  diags_.push_back({Severity::note, std::move(loc), std::move(message), std::move(code)});
}
void DiagnosticSink::add(Diagnostic d) { diags_.push_back(std::move(d)); }
bool DiagnosticSink::has_errors() const {
  for (const auto& d : diags_)
    if (d.severity == Severity::error) return true;
  return false;
}
void DiagnosticSink::throw_if_errors() const {
  if (has_errors()) throw InputError(diags_);
}

}  // namespace hw
