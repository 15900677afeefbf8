// The control messages' JSON: one flat object of strings, numbers, booleans and nulls, as
// the live page sends them ({"op": "stimulate", "x": 12.5, ...}). Nothing nested.
//
// Why a parser of our own and not a library: Debian 12's Boost (1.74) predates Boost.JSON,
// and a control message needs a flat object and nothing else; a parser that accepts only
// that has a small surface to fuzz (tests/fuzz/fuzz_live_control.cpp) and refuses the rest
// (nesting, huge inputs, duplicate keys) with a message instead of building large values.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace hw::live {

struct FlatValue {
  enum class Kind { string, number, boolean, null } kind = Kind::null;
  std::string text;   // string
  double number = 0;  // number (finite or not as parsed: "1e999" is +inf, refused later)
  bool boolean = false;
};

using FlatObject = std::map<std::string, FlatValue>;

// The most bytes a control message may have, and the most keys.
constexpr std::size_t kMaxMessageBytes = 4096;
constexpr std::size_t kMaxKeys = 32;

// The object in `text`, or nullopt with *error saying what is wrong and at which byte.
std::optional<FlatObject> parse_flat_json(std::string_view text, std::string* error);

// The object as JSON text (numbers in the shortest form that reads back the same double).
std::string flat_json_text(const FlatObject& o);

// `s` as a JSON string literal (quotes included), for the messages the server writes.
std::string json_quote(std::string_view s);

}  // namespace hw::live
