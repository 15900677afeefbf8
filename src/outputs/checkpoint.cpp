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
                      const CheckpointMeta& meta, const std::vector<unsigned char>& outputs) {
  const std::size_t size = state.size() + outputs.size();
  ByteWriter w;
  w.put_bytes(magic, 8);
  w.put<std::uint32_t>(checkpoint_version);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(header_size));
  w.put<std::uint64_t>(meta.case_hash);
  w.put<double>(meta.time);
  w.put<std::int64_t>(meta.step);
  w.put<std::uint64_t>(static_cast<std::uint64_t>(size));
  // The payload's hash chains the two parts: the same as one hash over both in a row.
  w.put<std::uint64_t>(fnv1a64(outputs.data(), outputs.size(), fnv1a64(state.data(), state.size())));
  w.put<std::uint64_t>(static_cast<std::uint64_t>(state.size()));
  w.put<std::uint64_t>(fnv1a64(w.bytes().data(), 64));
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
  if (version != checkpoint_version)
    bad(path, fmt::format("format version {} is not the supported version {} ({}); start the "
                          "run again without --restart",
                          version, checkpoint_version,
                          version < checkpoint_version
                              ? "written by an older heartwave, without the outputs' state"
                              : "written by a newer heartwave"));
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
  if (state_size > size)
    bad(path, fmt::format("corrupted header (state of {} bytes in a {}-byte payload)", state_size,
                          size));
  const auto split = f.begin() + static_cast<std::ptrdiff_t>(header_size + state_size);
  c.bytes.assign(f.begin() + header_size, split);
  c.outputs.assign(split, f.end());
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
