// Checkpoints: the simulation's saved state, framed so a restart can trust it.
//
// Why a frame around Simulation::save_state()'s bytes: a restart must refuse a file that
// was cut short (disk full, killed mid-copy), damaged, written by another format version or
// by a different case file — silently continuing from any of those would give wrong science.
// The frame carries a magic, a version, the sizes, the case file's hash, the time and step,
// and an FNV-1a 64 checksum of the payload (and one of the header itself).
//
// Layout (little-endian, 72-byte header, then the payload):
//   0  char[8] magic "HWCKPT\r\n"   8 u32 version   12 u32 header size (72)
//   16 u64 case hash                24 f64 time (ms)  32 i64 step
//   40 u64 payload size             48 u64 payload FNV-1a 64
//   56 u64 reserved (0)             64 u64 FNV-1a 64 of bytes 0..63
// Writes are atomic (io/atomic_file.hpp): temp in the same folder, fsync, rename, fsync dir.
//
// The signal helper lets SIGINT/SIGTERM end a run with a checkpoint: the handler only sets
// an atomic flag (async-signal-safe); the run loop polls stop_requested() between steps. A
// second signal while the first is pending falls back to the default action (the user
// really wants out).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hw::io {

inline constexpr std::uint32_t checkpoint_version = 1;

struct CheckpointMeta {
  std::uint64_t case_hash = 0;  // fnv1a64 of the case file's text (or any case identity)
  double time = 0;              // ms
  std::int64_t step = 0;
};

struct Checkpoint {
  std::vector<unsigned char> bytes;  // what Simulation::save_state() returned
  CheckpointMeta meta;
};

// FNV-1a 64-bit hash; `seed` chains calls over several buffers.
std::uint64_t fnv1a64(const void* data, std::size_t size,
                      std::uint64_t seed = 0xcbf29ce484222325ull);
inline std::uint64_t fnv1a64(std::string_view s) { return fnv1a64(s.data(), s.size()); }

// Writes the framed checkpoint atomically and durably. Throws hw::Error on I/O failure.
void write_checkpoint(const std::string& path, const void* bytes, std::size_t size,
                      const CheckpointMeta& meta);
inline void write_checkpoint(const std::string& path, const std::vector<unsigned char>& bytes,
                             const CheckpointMeta& meta) {
  write_checkpoint(path, bytes.data(), bytes.size(), meta);
}

// Reads and verifies a checkpoint. Throws hw::InputError (located at `path`) if the file is
// missing, not a checkpoint, of another version, truncated, corrupted, or — when
// expected_case_hash is non-zero — written for another case.
Checkpoint read_checkpoint(const std::string& path, std::uint64_t expected_case_hash = 0);

// --- SIGINT / SIGTERM ---------------------------------------------------------------------

// Installs handlers for SIGINT and SIGTERM that record the signal; restores the previous
// handlers on destruction. One at a time (a second live guard throws hw::Error).
class StopSignalGuard {
 public:
  StopSignalGuard();
  ~StopSignalGuard();
  StopSignalGuard(const StopSignalGuard&) = delete;
  StopSignalGuard& operator=(const StopSignalGuard&) = delete;
};

// True once SIGINT or SIGTERM arrived under a StopSignalGuard.
bool stop_requested();
// The signal number that asked to stop (0 if none).
int stop_signal();
// Clears the flag (tests; a run that handled the stop and goes on).
void clear_stop_request();

}  // namespace hw::io
