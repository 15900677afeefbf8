// Checkpoint framing and verification; SIGINT/SIGTERM flag. See checkpoint.hpp.
#include "outputs/checkpoint.hpp"

#include <atomic>
#include <csignal>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/bytes.hpp"
#include "core/error.hpp"

namespace hw::io {
namespace {

constexpr char magic[8] = {'H', 'W', 'C', 'K', 'P', 'T', '\r', '\n'};
constexpr std::size_t header_size = 72;

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  throw InputError(SourceLoc{path, 0, 0}, "checkpoint: " + why);
}

// Tags the origin block; a change of its layout needs a new tag.
constexpr std::string_view origin_tag = "heartwave-origin-1";

std::vector<unsigned char> origin_bytes(const CheckpointOrigin& o) {
  ByteWriter w;
  w.put_string(origin_tag);
  w.put_string(o.run_id);
  w.put_string(o.case_path);
  w.put<std::uint64_t>(o.case_text_hash);
  w.put<std::uint64_t>(o.overrides.size());
  for (const auto& s : o.overrides) w.put_string(s);
  return w.take();
}

CheckpointOrigin parse_origin(const unsigned char* p, std::size_t n) {
  ByteReader r(p, n, "checkpoint origin");
  if (r.get_string() != origin_tag) throw Error("checkpoint origin: unknown layout");
  CheckpointOrigin o;
  o.run_id = r.get_string();
  o.case_path = r.get_string();
  o.case_text_hash = r.get<std::uint64_t>();
  const auto count = r.get<std::uint64_t>();
  for (std::uint64_t i = 0; i < count; ++i) o.overrides.push_back(r.get_string());
  if (!r.at_end()) throw Error("checkpoint origin: bytes left after the overrides");
  return o;
}

}  // namespace

std::uint64_t fnv1a64(const void* data, std::size_t size, std::uint64_t seed) {
  // h = (h ⊕ byte) · 1099511628211, over every byte.
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = seed;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

void write_checkpoint(const std::string& path, const std::vector<unsigned char>& state,
                      const CheckpointMeta& meta, const std::vector<unsigned char>& outputs,
                      const CheckpointOrigin& origin) {
  ByteWriter head;  // the origin block: its length, then its bytes
  const std::vector<unsigned char> ob = origin_bytes(origin);
  head.put<std::uint64_t>(ob.size());
  head.put_bytes(ob.data(), ob.size());
  const std::vector<unsigned char>& block = head.bytes();
  const std::size_t size = block.size() + state.size() + outputs.size();
  ByteWriter w;
  w.put_bytes(magic, 8);
  w.put<std::uint32_t>(checkpoint_version);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(header_size));
  w.put<std::uint64_t>(meta.case_hash);
  w.put<double>(meta.time);
  w.put<std::int64_t>(meta.step);
  w.put<std::uint64_t>(static_cast<std::uint64_t>(size));
  // The payload's hash chains the parts: the same as one hash over all in a row.
  w.put<std::uint64_t>(fnv1a64(outputs.data(), outputs.size(),
                               fnv1a64(state.data(), state.size(), fnv1a64(block.data(), block.size()))));
  w.put<std::uint64_t>(static_cast<std::uint64_t>(state.size()));
  w.put<std::uint64_t>(fnv1a64(w.bytes().data(), 64));
  w.put_bytes(block.data(), block.size());
  w.put_bytes(state.data(), state.size());
  w.put_bytes(outputs.data(), outputs.size());
  const std::vector<unsigned char>& b = w.bytes();
  write_file_atomic(path, std::string_view(reinterpret_cast<const char*>(b.data()), b.size()),
                    /*durable=*/true);
}

Checkpoint read_checkpoint(const std::string& path, std::uint64_t expected_case_hash) {
  if (!std::filesystem::exists(path)) bad(path, "file not found");
  std::vector<unsigned char> f;
  try {
    f = read_file_bytes(path);
  } catch (const Error& e) {
    bad(path, e.what());
  }
  if (f.size() < 8 || std::memcmp(f.data(), magic, 8) != 0)
    bad(path, "not a Heartwave checkpoint (bad magic)");
  if (f.size() < header_size)
    bad(path, fmt::format("truncated: {} bytes, shorter than the {}-byte header", f.size(),
                          header_size));
  const unsigned char* h = f.data();
  // The header's fields in order (the file is at least header_size bytes: none runs out).
  ByteReader r(h, header_size, "checkpoint header");
  r.skip(8);  // the magic, checked above
  const auto version = r.get<std::uint32_t>();
  const auto stored_header_size = r.get<std::uint32_t>();
  Checkpoint c;
  c.meta.case_hash = r.get<std::uint64_t>();
  c.meta.time = r.get<double>();
  c.meta.step = r.get<std::int64_t>();
  const auto size = r.get<std::uint64_t>();
  const auto payload_hash = r.get<std::uint64_t>();
  const auto state_size = r.get<std::uint64_t>();
  const auto header_hash = r.get<std::uint64_t>();
  if (version != checkpoint_version && version != 2)
    bad(path, fmt::format("format version {} is not a supported version (2 or {}) ({}); start the "
                          "run again without --restart",
                          version, checkpoint_version,
                          version < checkpoint_version
                              ? "written by an older heartwave, without the outputs' state"
                              : "written by a newer heartwave"));
  c.version = version;
  if (stored_header_size != header_size || header_hash != fnv1a64(h, 64))
    bad(path, "corrupted header (checksum mismatch)");
  if (f.size() - header_size < size)
    bad(path, fmt::format("truncated: payload has {} of {} bytes", f.size() - header_size, size));
  if (f.size() - header_size > size)
    bad(path, fmt::format("{} unexpected bytes after the payload", f.size() - header_size - size));
  if (fnv1a64(h + header_size, size) != payload_hash)
    bad(path, "corrupted payload (checksum mismatch)");
  if (expected_case_hash != 0 && c.meta.case_hash != expected_case_hash)
    bad(path, fmt::format("written for another case (case hash {:016x}, this case {:016x})",
                          c.meta.case_hash, expected_case_hash));
  // Version 3: the origin block first (its length, then its bytes); version 2 has none.
  std::size_t origin_end = header_size;
  if (version >= 3) {
    std::uint64_t n = 0;
    if (size < 8 || (std::memcpy(&n, h + header_size, 8), n > size - 8))
      bad(path, "corrupted payload (origin block longer than the payload)");
    try {
      c.origin = parse_origin(h + header_size + 8, n);
    } catch (const Error& e) {
      bad(path, e.what());
    }
    origin_end = header_size + 8 + n;
  }
  if (state_size > f.size() - origin_end)
    bad(path, fmt::format("corrupted header (state of {} bytes in a {}-byte payload)", state_size,
                          size));
  const auto split = f.begin() + static_cast<std::ptrdiff_t>(origin_end + state_size);
  c.bytes.assign(f.begin() + static_cast<std::ptrdiff_t>(origin_end), split);
  c.outputs.assign(split, f.end());
  return c;
}

Checkpoint read_checkpoint_origin(const std::string& path) {
  Checkpoint c = read_checkpoint(path);
  c.bytes = {};
  c.outputs = {};
  return c;
}

// --- signals --------------------------------------------------------------------------------

namespace {

std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "signal flag must be lock-free");
std::atomic<bool> g_guard_live{false};
struct sigaction g_old_int, g_old_term;

extern "C" void hw_stop_handler(int sig) {
  // Only async-signal-safe operations: a lock-free atomic, signal(), raise().
  int expected = 0;
  if (!g_stop_signal.compare_exchange_strong(expected, sig)) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

}  // namespace

StopSignalGuard::StopSignalGuard() {
  bool was = false;
  if (!g_guard_live.compare_exchange_strong(was, true))
    throw Error("StopSignalGuard: a guard is already installed");
  g_stop_signal.store(0);
  struct sigaction sa {};
  sa.sa_handler = hw_stop_handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking write returns EINTR and the loop sees the flag
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

StopSignalGuard::~StopSignalGuard() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_guard_live.store(false);
}

bool stop_requested() { return g_stop_signal.load(std::memory_order_relaxed) != 0; }
int stop_signal() { return g_stop_signal.load(std::memory_order_relaxed); }
void clear_stop_request() { g_stop_signal.store(0); }

}  // namespace hw::io
