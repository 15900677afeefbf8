// The state file: a paced cell's state as TOML text (cell/saved_state.hpp holds what it
// means). One file a person can read and edit, that Python reads with tomllib:
//
//   format = "heartwave-cell-state"
//   version = 1
//   model = "luo_rudy_1991"
//   model_sha256 = "9f2c…"
//   [pacing]    bcl_ms, beats, stim_duration_ms, stim_amplitude, tolerance, steady_beat, last_change
//   [parameters]  the parameters the run set, absolute values
//   [states]      every state by name, model units, in the model's order
//
// Written atomically (core/atomic_file.hpp): a run stopped while saving leaves the old
// file or the new one, never half of one.
#pragma once

#include <string>

#include "cell/saved_state.hpp"

namespace hw::run {

std::string format_state_file(const cell::SavedState& s);
void write_state_file(const std::string& path, const cell::SavedState& s);

// InputError at the file (line and column where known) when it cannot be read, is not
// TOML, is not a state file or has a value that is not a number; s.source = path.
cell::SavedState read_state_file(const std::string& path);

}  // namespace hw::run
