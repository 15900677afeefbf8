// Checkpoints: round trip, and every kind of damage is refused with an InputError.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <cstring>
#include <limits>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/atomic_file.hpp"
#include "outputs/checkpoint.hpp"
#include "test_io_support.hpp"

using namespace hw;
using namespace hw::io;
using namespace hw::io::testing;

namespace {

std::vector<unsigned char> payload() {
  std::vector<unsigned char> p(1000);
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<unsigned char>(i * 7 + 3);
  return p;
}

void overwrite(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::ofstream o(path, std::ios::binary | std::ios::trunc);
  o.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

std::string error_of(const std::string& path, std::uint64_t hash = 0) {
  try {
    read_checkpoint(path, hash);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(IoCheckpoint, Fnv1a64KnownValues) {
  EXPECT_EQ(fnv1a64("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64(std::string_view("a")), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64(std::string_view("foobar")), 0x85944171f73967e8ull);
}

TEST(IoCheckpoint, RoundTripKeepsBytesAndMetadata) {
  ScratchDir dir("ckpt");
  const std::string path = dir / "state.hwck";
  const CheckpointMeta meta{fnv1a64(std::string_view("case text")), 123.25, 6162};
  write_checkpoint(path, payload(), meta);
  const Checkpoint c = read_checkpoint(path, meta.case_hash);
  EXPECT_EQ(c.bytes, payload());
  EXPECT_EQ(c.meta.case_hash, meta.case_hash);
  EXPECT_EQ(c.meta.time, 123.25);
  EXPECT_EQ(c.meta.step, 6162);
  // Overwriting is atomic: the second write replaces the first; no temp file remains.
  write_checkpoint(path, std::vector<unsigned char>{1, 2, 3}, meta);
  EXPECT_EQ(read_checkpoint(path).bytes, (std::vector<unsigned char>{1, 2, 3}));
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path)) ++files, (void)e;
  EXPECT_EQ(files, 1);
}

// The frame's layout, written out by hand at the documented offsets (checkpoint.hpp): the
// file must stay byte-for-byte what earlier builds wrote and read.
namespace {

// A version-2 frame (no origin block), as heartwave wrote before origins.
std::vector<unsigned char> version2_frame(const std::vector<unsigned char>& state, const std::vector<unsigned char>& outputs,
                                          const CheckpointMeta& meta) {
  std::vector<unsigned char> payload_bytes = state;
  payload_bytes.insert(payload_bytes.end(), outputs.begin(), outputs.end());
  std::vector<unsigned char> f(72 + payload_bytes.size(), 0);
  auto at = [&](std::size_t off, const auto& v) { std::memcpy(f.data() + off, &v, sizeof(v)); };
  std::memcpy(f.data(), "HWCKPT\r\n", 8);
  at(8, std::uint32_t(2));
  at(12, std::uint32_t(72));
  at(16, meta.case_hash);
  at(24, meta.time);
  at(32, meta.step);
  at(40, std::uint64_t(payload_bytes.size()));
  at(48, fnv1a64(payload_bytes.data(), payload_bytes.size()));
  at(56, std::uint64_t(state.size()));
  at(64, fnv1a64(f.data(), 64));
  std::memcpy(f.data() + 72, payload_bytes.data(), payload_bytes.size());
  return f;
}

}  // namespace

TEST(IoCheckpoint, FrameIsTheDocumentedLayoutByteForByte) {
  // Arrange: version 3, whose payload starts with the origin block (u64 length, then the
  // tag, run id, case path, case text hash and overrides, in core/bytes.hpp's encoding).
  ScratchDir dir("ckpt");
  const std::string path = dir / "layout.hwck";
  const std::vector<unsigned char> state{1, 2, 3}, outputs{9, 8};
  const CheckpointMeta meta{0x1122334455667788ull, 12.5, -3};
  const CheckpointOrigin origin{"r1", "/c.toml", 0xabcdefull, {"time.dt=0.01"}};
  ByteWriter ob;
  ob.put_string("heartwave-origin-1");
  ob.put_string("r1");
  ob.put_string("/c.toml");
  ob.put<std::uint64_t>(0xabcdefull);
  ob.put<std::uint64_t>(1);
  ob.put_string("time.dt=0.01");
  std::vector<unsigned char> payload_bytes(8);
  const std::uint64_t n = ob.size();
  std::memcpy(payload_bytes.data(), &n, 8);
  payload_bytes.insert(payload_bytes.end(), ob.bytes().begin(), ob.bytes().end());
  payload_bytes.insert(payload_bytes.end(), {1, 2, 3, 9, 8});
  std::vector<unsigned char> want(72, 0);
  auto at = [&](std::size_t off, const auto& v) { std::memcpy(want.data() + off, &v, sizeof(v)); };
  std::memcpy(want.data(), "HWCKPT\r\n", 8);
  at(8, std::uint32_t(3));
  at(12, std::uint32_t(72));
  at(16, meta.case_hash);
  at(24, meta.time);
  at(32, meta.step);
  at(40, std::uint64_t(payload_bytes.size()));
  at(48, fnv1a64(payload_bytes.data(), payload_bytes.size()));
  at(56, std::uint64_t(3));
  at(64, fnv1a64(want.data(), 64));
  want.insert(want.end(), payload_bytes.begin(), payload_bytes.end());

  // Act
  write_checkpoint(path, state, meta, outputs, origin);

  // Assert
  EXPECT_EQ(read_file_bytes(path), want);
  const Checkpoint c = read_checkpoint(path, meta.case_hash);
  EXPECT_EQ(c.bytes, state);
  EXPECT_EQ(c.outputs, outputs);
  EXPECT_EQ(c.meta.step, -3);
  EXPECT_EQ(c.origin.run_id, "r1");
  EXPECT_EQ(c.origin.case_path, "/c.toml");
  EXPECT_EQ(c.origin.case_text_hash, 0xabcdefull);
  EXPECT_EQ(c.origin.overrides, std::vector<std::string>{"time.dt=0.01"});
  EXPECT_EQ(read_checkpoint_origin(path).origin.run_id, "r1");
}

TEST(IoCheckpoint, AVersion2FileIsStillReadWithAnUnknownOrigin) {
  // Arrange
  ScratchDir dir("ckpt_old");
  const std::string path = dir / "old.hwck";
  overwrite(path, version2_frame({1, 2, 3}, {9, 8}, {42, 7.5, 150}));

  // Act
  const Checkpoint c = read_checkpoint(path, 42);

  // Assert
  EXPECT_EQ(c.version, 2u);
  EXPECT_EQ(c.bytes, (std::vector<unsigned char>{1, 2, 3}));
  EXPECT_EQ(c.outputs, (std::vector<unsigned char>{9, 8}));
  EXPECT_EQ(c.meta.time, 7.5);
  EXPECT_FALSE(c.origin.known());
}

TEST(IoCheckpoint, FlippedBytesAreDetectedAnywhere) {
  ScratchDir dir("ckpt_flip");
  const std::string path = dir / "s.hwck";
  write_checkpoint(path, payload(), {42, 1.0, 1});
  const auto good = read_file_bytes(path);
  for (std::size_t at : {std::size_t(9), std::size_t(20), std::size_t(30), std::size_t(45),
                         std::size_t(72), std::size_t(500), good.size() - 1}) {
    auto bad = good;
    bad[at] ^= 0x10;
    overwrite(path, bad);
    const std::string e = error_of(path);
    EXPECT_FALSE(e.empty()) << "byte " << at;
    EXPECT_NE(e.find(path), std::string::npos) << e;
  }
  auto bad = good;
  bad[500] ^= 1;
  overwrite(path, bad);
  EXPECT_NE(error_of(path).find("corrupted payload"), std::string::npos);
}

TEST(IoCheckpoint, TruncatedWrongCaseAndForeignFilesAreRefused) {
  ScratchDir dir("ckpt_trunc");
  const std::string path = dir / "s.hwck";
  write_checkpoint(path, payload(), {42, 1.0, 1});
  auto good = read_file_bytes(path);
  EXPECT_NE(error_of(path, 43).find("another case"), std::string::npos);
  overwrite(path, std::vector<unsigned char>(good.begin(), good.end() - 10));
  EXPECT_NE(error_of(path).find("truncated"), std::string::npos) << error_of(path);
  overwrite(path, std::vector<unsigned char>(good.begin(), good.begin() + 40));
  EXPECT_NE(error_of(path).find("truncated"), std::string::npos);
  overwrite(path, std::vector<unsigned char>{'h', 'e', 'l', 'l', 'o'});
  EXPECT_NE(error_of(path).find("not a Heartwave checkpoint"), std::string::npos);
  EXPECT_NE(error_of(dir / "missing.hwck").find("not found"), std::string::npos);
  good[8] = 99;  // version
  overwrite(path, good);
  EXPECT_NE(error_of(path).find("version 99"), std::string::npos);
}

TEST(IoCheckpoint, StateAndOutputsAreSplitBackAndAVersion1FileIsRefused) {
  // Arrange
  ScratchDir dir("ckpt_v2");
  const std::string path = dir / "s.hwck";
  const std::vector<unsigned char> outputs{9, 8, 7, 6, 5};
  write_checkpoint(path, payload(), {42, 2.5, 50}, outputs);

  // Act
  const Checkpoint c = read_checkpoint(path, 42);

  // Assert
  EXPECT_EQ(c.bytes, payload());
  EXPECT_EQ(c.outputs, outputs);
  // A version-1 file (byte 56 reserved, no outputs' state): refused, saying why.
  auto old = read_file_bytes(path);
  old[8] = 1;
  const std::uint64_t zero = 0;
  std::memcpy(old.data() + 56, &zero, 8);
  const std::uint64_t h = fnv1a64(old.data(), 64);
  std::memcpy(old.data() + 64, &h, 8);
  overwrite(path, old);
  const std::string e = error_of(path);
  EXPECT_NE(e.find("version 1 is not a supported version (2 or 3)"), std::string::npos) << e;
  EXPECT_NE(e.find("older heartwave"), std::string::npos) << e;
}

TEST(IoCheckpoint, StateStreamsRoundTripAndRefuseTruncation) {
  StateWriter w;
  w.put<double>(1.25);
  w.put_string("probes,csv\n");
  w.put_floats({1.f, -2.f, std::numeric_limits<float>::quiet_NaN()});
  const auto bytes = w.take();
  StateReader r(bytes);
  EXPECT_EQ(r.get<double>(), 1.25);
  EXPECT_EQ(r.get_string(), "probes,csv\n");
  const auto f = r.get_floats();
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[1], -2.f);
  EXPECT_TRUE(std::isnan(f[2]));
  EXPECT_TRUE(r.at_end());
  const std::vector<unsigned char> cut(bytes.begin(), bytes.begin() + 12);
  StateReader rc(cut);
  rc.get<double>();
  EXPECT_THROW(rc.get_string(), Error);
}

TEST(IoCheckpoint, StopSignalOnlySetsAFlagAndHandlersAreRestored) {
  EXPECT_FALSE(stop_requested());
  {
    StopSignalGuard guard;
    EXPECT_THROW(StopSignalGuard second, Error);
    std::raise(SIGTERM);
    EXPECT_TRUE(stop_requested());
    EXPECT_EQ(stop_signal(), SIGTERM);
    clear_stop_request();
    std::raise(SIGINT);
    EXPECT_EQ(stop_signal(), SIGINT);
    clear_stop_request();
  }
  EXPECT_FALSE(stop_requested());
  struct sigaction now {};
  sigaction(SIGTERM, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);
}
