// Base64 (RFC 4648, with padding) for binary arrays inside VTK XML files.
//
// Why our own: ten lines, no dependency, and the decoder lets tests read our .vti back.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hw::io {

// Appends the encoding of [data, data+size) to out.
void base64_encode(const void* data, std::size_t size, std::string& out);

// Decodes one padded block; whitespace is skipped. Throws hw::Error on a bad character.
// VTK writes the byte-count header and the data as two separately padded blocks: decode
// them one at a time (base64_block_length tells where the first one ends).
std::vector<unsigned char> base64_decode(std::string_view text);

// Number of characters of the padded encoding of `bytes` bytes.
inline std::size_t base64_block_length(std::size_t bytes) { return 4 * ((bytes + 2) / 3); }

}  // namespace hw::io
