// SHA-256, for cache keys and for matching a model against the built-in library.
//
// Why a cryptographic hash: a collision would load the wrong compiled model from the cache
// without any error, so the key must not collide, even for inputs chosen to.
#pragma once

#include <string>
#include <string_view>

namespace hw::model {

// Lower-case hex digest (64 characters).
std::string sha256_hex(std::string_view data);

}  // namespace hw::model
