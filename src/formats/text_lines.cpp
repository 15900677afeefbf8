// See text_lines.hpp.
#include "formats/text_lines.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace hw::io {

std::vector<std::uint8_t> read_input_bytes(const std::string& path, const SourceLoc& where) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(where, fmt::format("'{}' is a directory, not a file", path));
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw InputError(where, fmt::format("cannot open '{}' (no such file or not readable)", path));
  const std::streamoff size = in.tellg();
  if (size < 0) throw InputError(where, fmt::format("cannot read '{}'", path));
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  in.seekg(0);
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), size))
    throw InputError(where, fmt::format("cannot read '{}' (it changed or shrank while being read)", path));
  return bytes;
}

TextLines::TextLines(const std::string& path, char comment) : name_(path), comment_(comment) {
  const std::vector<std::uint8_t> b = read_input_bytes(path, SourceLoc{path, 0, 0});
  text_.assign(b.begin(), b.end());
}

TextLines::TextLines(std::string name, std::string text, char comment)
    : name_(std::move(name)), text_(std::move(text)), comment_(comment) {}

bool TextLines::next(std::vector<std::string_view>& words) {
  words.clear();
  while (pos_ < text_.size()) {
    std::size_t end = text_.find('\n', pos_);
    if (end == std::string::npos) end = text_.size();
    std::string_view l(text_.data() + pos_, end - pos_);
    pos_ = end + 1;
    ++line_;
    if (const auto c = l.find(comment_); c != std::string_view::npos) l = l.substr(0, c);
    std::size_t i = 0;
    while (i < l.size()) {
      while (i < l.size() && (l[i] == ' ' || l[i] == '\t' || l[i] == '\r' || l[i] == ',')) ++i;
      std::size_t j = i;
      while (j < l.size() && !(l[j] == ' ' || l[j] == '\t' || l[j] == '\r' || l[j] == ',')) ++j;
      if (j > i) words.push_back(l.substr(i, j - i));
      i = j;
    }
    if (!words.empty()) return true;
  }
  return false;
}

void TextLines::need(std::vector<std::string_view>& words, const std::string& what) {
  if (!next(words))
    throw InputError(SourceLoc{name_, line_, 0},
                     fmt::format("the file ends early: expected {} (truncated file?)", what));
}

void TextLines::fail(const std::string& message) const { throw InputError(loc(), message); }

double TextLines::number(const std::vector<std::string_view>& w, std::size_t i, const char* what) const {
  if (i >= w.size()) fail(fmt::format("the line ends before {} (expected at least {} values)", what, i + 1));
  const std::string s(w[i]);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') fail(fmt::format("{} '{}' is not a number", what, s));
  if (!std::isfinite(v) || errno == ERANGE)
    fail(fmt::format("{} = {} is not a finite number (NaN, infinite or out of range)", what, s));
  return v;
}

std::int64_t TextLines::integer(const std::vector<std::string_view>& w, std::size_t i, const char* what) const {
  if (i >= w.size()) fail(fmt::format("the line ends before {} (expected at least {} values)", what, i + 1));
  const std::string s(w[i]);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (end == s.c_str() || *end != '\0') fail(fmt::format("{} '{}' is not an integer", what, s));
  if (errno == ERANGE || v > (1LL << 40) || v < -(1LL << 40)) fail(fmt::format("{} = {} is out of range", what, s));
  return v;
}

std::size_t TextLines::count(const std::vector<std::string_view>& w, std::size_t i, const char* what,
                             std::size_t min_bytes) const {
  const std::int64_t n = integer(w, i, what);
  if (n < 0) fail(fmt::format("{} = {} must not be negative", what, n));
  const std::size_t left = text_.size() - std::min(pos_, text_.size());
  if (static_cast<std::size_t>(n) > left / std::max<std::size_t>(min_bytes, 1) + 1)
    fail(fmt::format("{} = {} cannot fit in the {} bytes left in the file (each takes at least {}): a corrupt "
                     "header or a truncated file",
                     what, n, left, min_bytes));
  return static_cast<std::size_t>(n);
}

}  // namespace hw::io
