// Turning names and text from a model file into things that are safe in generated source.
//
// Model files are user input: a variable may be called `int`, `__x` or `a*/b`, a
// description may hold newlines or "*/". Nothing from a model reaches generated C++ or
// CUDA except through these functions, which guarantee:
//   - sanitise_identifier: only [A-Za-z0-9_], never starting with a digit, no "__" and no
//     leading/trailing '_', never empty, at most max_len characters. Callers still prefix
//     it with a generated tag (a12_...) so it cannot be a keyword or collide.
//   - sanitise_comment: printable ASCII from a small whitelist only (no '/', '*', '\\',
//     '?', control characters or newlines), so it cannot end a comment, continue a line
//     or form a trigraph.
//   - c_string_literal: a double-quoted C string literal whose bytes equal the input,
//     using octal escapes for '"', '\\', '?', control and non-ASCII bytes
//     (split into adjacent literals after each newline).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hw::model {

std::string sanitise_identifier(std::string_view name, std::size_t max_len = 32);
std::string sanitise_comment(std::string_view text, std::size_t max_len = 80);
std::string c_string_literal(std::string_view bytes);

}  // namespace hw::model
