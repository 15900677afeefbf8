// core/bytes.hpp: the one byte serialiser of binary state.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/bytes.hpp"
#include "core/error.hpp"

using hw::ByteReader;
using hw::ByteWriter;

TEST(CoreBytes, ValuesStringsAndArraysRoundTrip) {
  // Arrange
  ByteWriter w;
  w.put<std::uint8_t>(4);
  w.put<std::int64_t>(-7);
  w.put<double>(1.25);
  w.put_string("probes,csv\n");
  w.put_floats({1.f, -2.f, std::numeric_limits<float>::quiet_NaN()});
  w.put_as<float>({0.1, -3.0});
  w.put_as<double>({0.1});
  const std::vector<unsigned char> bytes = w.take();

  // Act
  ByteReader r(bytes, "test");
  const auto tag = r.get<std::uint8_t>();
  const auto steps = r.get<std::int64_t>();
  const auto x = r.get<double>();
  const std::string s = r.get_string();
  const std::vector<float> f = r.get_floats();
  std::vector<double> narrowed, exact;
  r.get_as<float>(2, narrowed);
  r.get_as<double>(1, exact);

  // Assert
  EXPECT_EQ(tag, 4);
  EXPECT_EQ(steps, -7);
  EXPECT_EQ(x, 1.25);
  EXPECT_EQ(s, "probes,csv\n");
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[1], -2.f);
  EXPECT_TRUE(std::isnan(f[2]));
  EXPECT_EQ(narrowed, (std::vector<double>{double(0.1f), -3.0}));
  EXPECT_EQ(exact, (std::vector<double>{0.1}));
  EXPECT_TRUE(r.at_end());
}

TEST(CoreBytes, LayoutIsLittleEndianWithU64Counts) {
  ByteWriter w;
  w.put<std::uint32_t>(0x01020304u);
  w.put_string("ab");
  EXPECT_EQ(w.bytes(), (std::vector<unsigned char>{4, 3, 2, 1, 2, 0, 0, 0, 0, 0, 0, 0, 'a', 'b'}));
}

TEST(CoreBytes, ReaderRefusesBytesThatRunOutAndNamesThem) {
  ByteWriter w;
  w.put<double>(1.0);
  w.put_string("a longer string");
  w.put_floats({1.f, 2.f});
  const auto bytes = w.take();
  for (std::size_t cut : {std::size_t(3), std::size_t(12), bytes.size() - 1}) {
    const std::vector<unsigned char> part(bytes.begin(), bytes.begin() + std::ptrdiff_t(cut));
    ByteReader r(part, "outputs' state");
    try {
      r.get<double>();
      r.get_string();
      r.get_floats();
      FAIL() << "bytes cut at " << cut << " were read";
    } catch (const hw::Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("outputs' state"), std::string::npos) << m;
      EXPECT_NE(m.find("truncated"), std::string::npos) << m;
    }
  }
  // A count far beyond the bytes (damage) is refused, not allocated.
  ByteWriter huge;
  huge.put<std::uint64_t>(std::uint64_t(1) << 62);
  const auto h = huge.take();
  ByteReader r(h, "x");
  EXPECT_THROW(r.get_floats(), hw::Error);
  ByteReader r2(h, "x");
  std::vector<double> v;
  r2.skip(0);
  EXPECT_THROW(r2.get_as<double>(std::size_t(1) << 62, v), hw::Error);
}
