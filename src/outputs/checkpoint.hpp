// Checkpoints: the simulation's saved state and the outputs' accumulators, framed so a
// restart can trust them.
//
// Why the outputs are in it: the activation/APD90 maps, probe traces and pseudo-ECG are
// accumulated over the whole run; a restart that only had V would produce maps and traces
// of the continued part. With the accumulators (io::OutputManager::save_state) a run that
// was interrupted and restarted writes the same files as one that was not.
//
// Why a frame around the bytes: a restart must refuse a file that
// was cut short (disk full, killed mid-copy), damaged, written by another format version or
// by a different case file — silently continuing from any of those would give wrong science.
// The frame carries a magic, a version, the sizes, the case file's hash, the time and step,
// and an FNV-1a 64 checksum of the payload (and one of the header itself).
//
// Layout (little-endian, 72-byte header, then the payload):
//   0  char[8] magic "HWCKPT\r\n"   8 u32 version (3)  12 u32 header size (72)
//   16 u64 case hash                24 f64 time (ms)  32 i64 step
//   40 u64 payload size             48 u64 payload FNV-1a 64
//   56 u64 simulation state size S  64 u64 FNV-1a 64 of bytes 0..63
// Version 3's payload is the run's origin (a u64 length, then the origin's bytes: see
// CheckpointOrigin), the simulation's state (S bytes) and the outputs' state (the rest).
// Version 2 (no origin: the payload starts with the state) is still read, with an empty
// origin. Version 1 (no outputs' state, byte 56 reserved) is refused: its maps and traces
// could not be continued.
//
// Why the origin: `--restart CKPT` alone must continue the same run — the same case file,
// the same --set overrides, into the same output folder — and a restart given other
// physics must be told which key differs, not only that a hash does.
// Writes are atomic (core/atomic_file.hpp): temp in the same folder, fsync, rename, fsync dir.
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

#include "core/bytes.hpp"

namespace hw::io {

inline constexpr std::uint32_t checkpoint_version = 3;

// Which run wrote a checkpoint, so that a restart can continue it as it was started.
struct CheckpointOrigin {
  std::string run_id;              // the run's id (RunManifest::run_id); empty: unknown
  std::string case_path;           // absolute path of the case file; empty: the built-in case
  std::uint64_t case_text_hash = 0;  // fnv1a64 of the case file's text (0: unknown)
  std::vector<std::string> overrides;  // every --set KEY=VALUE, in the order given
  bool known() const { return !run_id.empty(); }
};

struct CheckpointMeta {
  std::uint64_t case_hash = 0;  // fnv1a64 of the case file's text (or any case identity)
  double time = 0;              // ms
  std::int64_t step = 0;
};

struct Checkpoint {
  std::vector<unsigned char> bytes;    // what Simulation::save_state() returned
  std::vector<unsigned char> outputs;  // what OutputManager::save_state() returned (may be empty)
  CheckpointMeta meta;
  CheckpointOrigin origin;             // empty for a version-2 file
  std::uint32_t version = checkpoint_version;
};

// FNV-1a 64-bit hash; `seed` chains calls over several buffers.
std::uint64_t fnv1a64(const void* data, std::size_t size,
                      std::uint64_t seed = 0xcbf29ce484222325ull);
inline std::uint64_t fnv1a64(std::string_view s) { return fnv1a64(s.data(), s.size()); }

// Writes the framed checkpoint atomically and durably. Throws hw::Error on I/O failure.
void write_checkpoint(const std::string& path, const std::vector<unsigned char>& state,
                      const CheckpointMeta& meta,
                      const std::vector<unsigned char>& outputs = {},
                      const CheckpointOrigin& origin = {});

// Reads and verifies a checkpoint. Throws hw::InputError (located at `path`) if the file is
// missing, not a checkpoint, of another version, truncated, corrupted, or — when
// expected_case_hash is non-zero — written for another case.
Checkpoint read_checkpoint(const std::string& path, std::uint64_t expected_case_hash = 0);

// The checkpoint's meta and origin (the whole file verified as read_checkpoint does, the
// states dropped): what a restart needs to know before it sets the case up.
Checkpoint read_checkpoint_origin(const std::string& path);

// The outputs' state: core/bytes.hpp's streams, whose reader names "outputs' state" in
// its messages (hw::Error when the bytes run out).
class StateWriter : public ByteWriter {};

class StateReader : public ByteReader {
 public:
  explicit StateReader(const std::vector<unsigned char>& bytes) : ByteReader(bytes, "outputs' state") {}
};

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
