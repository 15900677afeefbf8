// The reader's bounds checks (see bytes.hpp).
#include "core/bytes.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw {

void ByteReader::need(std::size_t n, const char* item) const {
  if (n > remaining())
    throw Error(fmt::format("{}: truncated at byte {} of {}: {} runs past the end (the bytes were "
                            "cut short or damaged)",
                            what_, at_, size_, item));
}

void ByteReader::get_bytes(void* p, std::size_t n) {
  need(n, "a value");
  if (n) std::memcpy(p, data_ + at_, n);
  at_ += n;
}

void ByteReader::skip(std::size_t n) {
  need(n, "a field");
  at_ += n;
}

std::string ByteReader::get_string() {
  const auto n = get<std::uint64_t>();
  need(n, "a string");
  std::string s(n, '\0');
  get_bytes(s.data(), n);
  return s;
}

std::vector<float> ByteReader::get_floats() {
  const auto n = get<std::uint64_t>();
  if (n > remaining() / sizeof(float)) need(remaining() + 1, "an array");  // n·4 may overflow
  std::vector<float> v(n);
  get_bytes(v.data(), n * sizeof(float));
  return v;
}

}  // namespace hw
