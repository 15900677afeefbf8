// Tokeniser of the .hwm language.
//
// Splits the text into tokens with 1-based line:col locations. Line structure matters in
// the language (one statement per line), so newlines are tokens — except inside ( ),
// where an expression may freely span lines. Unit text in [brackets] is kept as one raw
// token for the units parser. Trailing comments (after code on the same line) are kept by
// line so that declarations can carry them as descriptions. Problems go to the sink;
// the lexer never throws and always ends the stream with an end token.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace hw::model::hwm {

enum class Tok : std::uint8_t {
  end, newline, ident, number, string, units, annotation,
  lparen, rparen, comma, assign,
  plus, minus, star, slash, caret,
  lt, le, gt, ge, eq, ne,
};

struct Token {
  Tok kind = Tok::end;
  std::string text;    // identifier, string contents, unit text, annotation term, number
  double value = 0.0;  // for numbers
  int line = 0, col = 0;
};

struct LexResult {
  std::vector<Token> tokens;
  std::map<int, std::string> trailing_comments;  // line -> comment text (trimmed)
};

LexResult lex(std::string_view text, const std::string& file, DiagnosticSink& sink);

const char* token_name(Tok kind);

}  // namespace hw::model::hwm
