// Little-endian byte streams: the one serialiser of binary state (checkpoint frames, the
// simulation's state, the outputs' accumulators).
//
// Why one, in core: each floor that saved state had written its own memcpy packing (the
// tissue floor may not include the outputs floor), with its own bounds checks and its own
// truncation message. One writer and one reader give every format the same layout rules
// and the same refusal of short input. The bytes are the host's, so the host must be
// little-endian (asserted), which makes the files little-endian.
//
// Layout: put<T> writes sizeof(T) raw bytes; strings and float arrays are a u64 count and
// then the elements; put_as<Stored> writes doubles converted to Stored, with no count (the
// reader knows how many).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace hw {

static_assert(std::endian::native == std::endian::little,
              "binary state is little-endian: a big-endian host would need byte swaps");

class ByteWriter {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>, "put: trivially copyable values only");
    put_bytes(&v, sizeof(T));
  }
  void put_bytes(const void* p, std::size_t n) {
    const std::size_t at = buf_.size();
    buf_.resize(at + n);
    if (n) std::memcpy(buf_.data() + at, p, n);
  }
  // u64 length, then the characters.
  void put_string(std::string_view s) {
    put<std::uint64_t>(s.size());
    put_bytes(s.data(), s.size());
  }
  // u64 count, then the floats.
  void put_floats(const std::vector<float>& v) {
    put<std::uint64_t>(v.size());
    put_bytes(v.data(), v.size() * sizeof(float));
  }
  // Each value converted to Stored (float or double), no count.
  template <class Stored>
  void put_as(const std::vector<double>& v) {
    static_assert(std::is_floating_point_v<Stored>);
    const std::size_t at = buf_.size();
    buf_.resize(at + v.size() * sizeof(Stored));
    for (std::size_t i = 0; i < v.size(); ++i) {
      const Stored x = Stored(v[i]);
      std::memcpy(buf_.data() + at + i * sizeof(Stored), &x, sizeof(Stored));
    }
  }
  std::size_t size() const { return buf_.size(); }
  const std::vector<unsigned char>& bytes() const { return buf_; }
  std::vector<unsigned char> take() { return std::move(buf_); }

 private:
  std::vector<unsigned char> buf_;
};

// Reads what a ByteWriter wrote. Every get throws hw::Error "<what>: ..." when the bytes
// run out, naming the position, so damaged input is refused rather than read past.
class ByteReader {
 public:
  // `what` names the bytes in messages ("outputs' state", "load_state"). The bytes must
  // outlive the reader.
  ByteReader(const unsigned char* data, std::size_t size, std::string what = "byte stream")
      : data_(data), size_(size), what_(std::move(what)) {}
  explicit ByteReader(const std::vector<unsigned char>& bytes, std::string what = "byte stream")
      : ByteReader(bytes.data(), bytes.size(), std::move(what)) {}

  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>, "get: trivially copyable values only");
    T v;
    get_bytes(&v, sizeof(T));
    return v;
  }
  void get_bytes(void* p, std::size_t n);
  void skip(std::size_t n);  // bytes already checked by other means (a magic)
  std::string get_string();
  std::vector<float> get_floats();
  // n values stored as Stored (float or double), widened to double.
  template <class Stored>
  void get_as(std::size_t n, std::vector<double>& out);

  std::size_t position() const { return at_; }
  std::size_t remaining() const { return size_ - at_; }
  bool at_end() const { return at_ == size_; }
  const std::string& what() const { return what_; }

 private:
  // Throws unless n more bytes are there; `item` says what was being read.
  void need(std::size_t n, const char* item) const;

  const unsigned char* data_;
  std::size_t size_;
  std::size_t at_ = 0;
  std::string what_;
};

template <class Stored>
void ByteReader::get_as(std::size_t n, std::vector<double>& out) {
  static_assert(std::is_floating_point_v<Stored>);
  if (n > remaining() / sizeof(Stored)) need(remaining() + 1, "an array");  // n·size may overflow
  out.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    Stored x;
    std::memcpy(&x, data_ + at_ + i * sizeof(Stored), sizeof(Stored));
    out[i] = double(x);
  }
  at_ += n * sizeof(Stored);
}

}  // namespace hw
