// Whole-file writes that a crash or a reader never sees half-done.
//
// Why: checkpoints, the .pvd collection and the .xdmf index are rewritten as a run goes on,
// and ParaView (or a restart) may open them at any moment. Writing a temporary file in the
// same folder, fsync-ing it, renaming it over the target and fsync-ing the folder makes the
// switch atomic on POSIX file systems: a reader sees the old file or the new one, never a mix.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hw::io {

// Replaces `path` by `bytes` atomically. durable = true also fsyncs the file and its folder
// (checkpoints); false skips the fsyncs (index files rewritten every output step, where
// atomicity matters but surviving a power cut does not). Throws hw::Error naming the path
// and the system's reason on any failure; the temporary file is removed.
void write_file_atomic(const std::string& path, std::string_view bytes, bool durable = true);

// The whole file as bytes. Throws hw::Error naming the path if it cannot be read.
std::vector<unsigned char> read_file_bytes(const std::string& path);

// Creates `dir` and its parents if missing. Throws hw::Error if that fails.
void ensure_directory(const std::string& dir);

}  // namespace hw::io
