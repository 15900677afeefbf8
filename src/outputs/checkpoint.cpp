// Checkpoint framing and verification; SIGINT/SIGTERM flag. See checkpoint.hpp.
#include "outputs/checkpoint.hpp"

#include <atomic>
#include <bit>
#include <csignal>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/atomic_file.hpp"

namespace hw::io {
namespace {

static_assert(std::endian::native == std::endian::little,
              "checkpoint framing assumes a little-endian host");

constexpr char magic[8] = {'H', 'W', 'C', 'K', 'P', 'T', '\r', '\n'};
constexpr std::size_t header_size = 72;

template <class T>
void put(unsigned char* p, std::size_t at, T v) {
  std::memcpy(p + at, &v, sizeof(T));
}
template <class T>
T get(const unsigned char* p, std::size_t at) {
  T v;
  std::memcpy(&v, p + at, sizeof(T));
  return v;
}

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
  std::string buf(header_size + size, '\0');
  auto* h = reinterpret_cast<unsigned char*>(buf.data());
  std::memcpy(h, magic, 8);
  put<std::uint32_t>(h, 8, checkpoint_version);
  put<std::uint32_t>(h, 12, static_cast<std::uint32_t>(header_size));
  put<std::uint64_t>(h, 16, meta.case_hash);
  put<double>(h, 24, meta.time);
  put<std::int64_t>(h, 32, meta.step);
  put<std::uint64_t>(h, 40, static_cast<std::uint64_t>(size));
  if (!state.empty()) std::memcpy(h + header_size, state.data(), state.size());
  if (!outputs.empty()) std::memcpy(h + header_size + state.size(), outputs.data(), outputs.size());
  put<std::uint64_t>(h, 48, fnv1a64(h + header_size, size));
  put<std::uint64_t>(h, 56, static_cast<std::uint64_t>(state.size()));
  put<std::uint64_t>(h, 64, fnv1a64(h, 64));
  write_file_atomic(path, buf, /*durable=*/true);
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
  const auto version = get<std::uint32_t>(h, 8);
  if (version != checkpoint_version)
    bad(path, fmt::format("format version {} is not the supported version {} ({}); start the "
                          "run again without --restart",
                          version, checkpoint_version,
                          version < checkpoint_version
                              ? "written by an older heartwave, without the outputs' state"
                              : "written by a newer heartwave"));
  if (get<std::uint32_t>(h, 12) != header_size || get<std::uint64_t>(h, 64) != fnv1a64(h, 64))
    bad(path, "corrupted header (checksum mismatch)");
  const auto size = get<std::uint64_t>(h, 40);
  if (f.size() - header_size < size)
    bad(path, fmt::format("truncated: payload has {} of {} bytes", f.size() - header_size, size));
  if (f.size() - header_size > size)
    bad(path, fmt::format("{} unexpected bytes after the payload", f.size() - header_size - size));
  if (fnv1a64(h + header_size, size) != get<std::uint64_t>(h, 48))
    bad(path, "corrupted payload (checksum mismatch)");
  Checkpoint c;
  c.meta.case_hash = get<std::uint64_t>(h, 16);
  c.meta.time = get<double>(h, 24);
  c.meta.step = get<std::int64_t>(h, 32);
  if (expected_case_hash != 0 && c.meta.case_hash != expected_case_hash)
    bad(path, fmt::format("written for another case (case hash {:016x}, this case {:016x})",
                          c.meta.case_hash, expected_case_hash));
  const auto state_size = get<std::uint64_t>(h, 56);
  if (state_size > size)
    bad(path, fmt::format("corrupted header (state of {} bytes in a {}-byte payload)", state_size,
                          size));
  const auto split = f.begin() + static_cast<std::ptrdiff_t>(header_size + state_size);
  c.bytes.assign(f.begin() + header_size, split);
  c.outputs.assign(split, f.end());
  return c;
}

void StateWriter::put_bytes(const void* p, std::size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  buf_.insert(buf_.end(), b, b + n);
}

void StateWriter::put_string(std::string_view s) {
  put<std::uint64_t>(s.size());
  put_bytes(s.data(), s.size());
}

void StateWriter::put_floats(const std::vector<float>& v) {
  put<std::uint64_t>(v.size());
  put_bytes(v.data(), v.size() * sizeof(float));
}

void StateReader::get_bytes(void* p, std::size_t n) {
  if (n > bytes_.size() - at_)
    throw Error(fmt::format("outputs' state: truncated at byte {} of {}", at_, bytes_.size()));
  if (n) std::memcpy(p, bytes_.data() + at_, n);
  at_ += n;
}

std::string StateReader::get_string() {
  const auto n = get<std::uint64_t>();
  if (n > bytes_.size() - at_) throw Error("outputs' state: a string runs past the end");
  std::string s(n, '\0');
  get_bytes(s.data(), n);
  return s;
}

std::vector<float> StateReader::get_floats() {
  const auto n = get<std::uint64_t>();
  if (n > (bytes_.size() - at_) / sizeof(float))
    throw Error("outputs' state: an array runs past the end");
  std::vector<float> v(n);
  get_bytes(v.data(), n * sizeof(float));
  return v;
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
