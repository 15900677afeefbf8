// A reader of whitespace-separated text records with line numbers, shared by the TetGen
// and openCARP mesh readers (and the legacy VTK reader's ASCII parts).
//
// Why: both formats are "a count, then one record per line"; what differs is the record.
// Every number is checked (a word that is not a number, a value out of range, a line that
// ends early) and reported at file:line, so a reader's errors are located for free.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace hw::io {

// The whole of a user's file, for every reader of this floor. InputError at `where` (the
// file itself, or the header line that named it) when the path is a directory, missing or
// unreadable: never a stream exception (reading a directory through a stream throws one).
std::vector<std::uint8_t> read_input_bytes(const std::string& path, const SourceLoc& where);

class TextLines {
 public:
  // Reads the whole file; InputError at `path` when it cannot be opened.
  explicit TextLines(const std::string& path, char comment = '#');
  // From memory (fuzzing, tests); `name` is used in messages.
  TextLines(std::string name, std::string text, char comment = '#');

  // The next line with something on it (comments and blank lines skipped), split into
  // words; false at the end of the file.
  bool next(std::vector<std::string_view>& words);
  // As next(), but the end of the file is an InputError saying what was expected.
  void need(std::vector<std::string_view>& words, const std::string& what);
  int line() const { return line_; }
  const std::string& name() const { return name_; }
  std::size_t size() const { return text_.size(); }
  SourceLoc loc() const { return SourceLoc{name_, line_, 0}; }
  [[noreturn]] void fail(const std::string& message) const;

  // Parses words[i] (InputError at this line naming `what` when absent or malformed).
  double number(const std::vector<std::string_view>& w, std::size_t i, const char* what) const;
  std::int64_t integer(const std::vector<std::string_view>& w, std::size_t i, const char* what) const;

  // A count from a header, checked against the bytes left: each record takes at least
  // `min_bytes` characters, so a count the file cannot hold is refused before allocating.
  std::size_t count(const std::vector<std::string_view>& w, std::size_t i, const char* what,
                    std::size_t min_bytes) const;

 private:
  std::string name_, text_;
  std::size_t pos_ = 0;
  int line_ = 0;
  char comment_;
};

}  // namespace hw::io
