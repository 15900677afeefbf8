#include "model/frontend/hwm/lexer.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace hw::model::hwm {

const char* token_name(Tok kind) {
  switch (kind) {
    case Tok::end: return "end of file";
    case Tok::newline: return "end of line";
    case Tok::ident: return "a name";
    case Tok::number: return "a number";
    case Tok::string: return "a string";
    case Tok::units: return "units in [brackets]";
    case Tok::annotation: return "an @annotation";
    case Tok::lparen: return "'('";
    case Tok::rparen: return "')'";
    case Tok::comma: return "','";
    case Tok::assign: return "'='";
    case Tok::plus: return "'+'";
    case Tok::minus: return "'-'";
    case Tok::star: return "'*'";
    case Tok::slash: return "'/'";
    case Tok::caret: return "'^'";
    case Tok::lt: return "'<'";
    case Tok::le: return "'<='";
    case Tok::gt: return "'>'";
    case Tok::ge: return "'>='";
    case Tok::eq: return "'=='";
    case Tok::ne: return "'!='";
  }
  return "a token";
}

namespace {

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
bool is_term_char(char c) {
  return is_ident_char(c) || c == '.' || c == ':' || c == '/' || c == '-';
}

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

std::string describe_char(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  char buf[32];
  if (u >= 0x20 && u < 0x7f)
    std::snprintf(buf, sizeof buf, "'%c'", c);
  else
    std::snprintf(buf, sizeof buf, "byte 0x%02X", u);
  return buf;
}

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& file, DiagnosticSink& sink)
      : s_(text), file_(file), sink_(sink) {}

  LexResult run() {
    while (pos_ < s_.size()) step();
    push(Tok::newline, line_, col_);
    push(Tok::end, line_, col_);
    return std::move(out_);
  }

 private:
  void error(int line, int col, std::string msg) {
    // A fuzzer's garbage should not produce megabytes of messages.
    if (++errors_ <= kMaxErrors) sink_.error({file_, line, col}, std::move(msg));
  }

  void push(Tok kind, int line, int col, std::string text = {}, double value = 0.0) {
    out_.tokens.push_back({kind, std::move(text), value, line, col});
    last_token_line_ = line;
  }

  char peek(std::size_t ahead = 0) const {
    return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0';
  }
  void advance(std::size_t n = 1) {
    pos_ += n;
    col_ += static_cast<int>(n);
  }

  void step() {
    char c = peek();
    int line = line_, col = col_;
    if (c == '\n') {
      if (depth_ == 0) push(Tok::newline, line, col);
      ++pos_;
      ++line_;
      col_ = 1;
      return;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') return advance();
    if (c == '#') return comment();
    if (is_ident_start(c)) {
      std::size_t b = pos_;
      while (is_ident_char(peek())) advance();
      return push(Tok::ident, line, col, std::string(s_.substr(b, pos_ - b)));
    }
    if (is_digit(c) || (c == '.' && is_digit(peek(1)))) return number();
    switch (c) {
      case '"': return string();
      case '[': return units();
      case '@': return annotation();
      case '(': ++depth_; advance(); return push(Tok::lparen, line, col);
      case ')': if (depth_ > 0) --depth_; advance(); return push(Tok::rparen, line, col);
      case ',': advance(); return push(Tok::comma, line, col);
      case '+': advance(); return push(Tok::plus, line, col);
      case '-': advance(); return push(Tok::minus, line, col);
      case '*':
        if (peek(1) == '*') {
          error(line, col, "'**' is not an operator; write powers as a^b");
          return advance(2);
        }
        advance();
        return push(Tok::star, line, col);
      case '/': advance(); return push(Tok::slash, line, col);
      case '^': advance(); return push(Tok::caret, line, col);
      case '<':
        if (peek(1) == '=') { advance(2); return push(Tok::le, line, col); }
        advance();
        return push(Tok::lt, line, col);
      case '>':
        if (peek(1) == '=') { advance(2); return push(Tok::ge, line, col); }
        advance();
        return push(Tok::gt, line, col);
      case '=':
        if (peek(1) == '=') { advance(2); return push(Tok::eq, line, col); }
        advance();
        return push(Tok::assign, line, col);
      case '!':
        if (peek(1) == '=') { advance(2); return push(Tok::ne, line, col); }
        error(line, col, "'!' is not an operator; use 'not'");
        return advance();
      case '&':
      case '|':
        error(line, col, std::string("'") + c + "' is not an operator; use 'and' / 'or'");
        advance();
        if (peek() == c) advance();
        return;
      default:
        error(line, col, "unexpected character " + describe_char(c));
        return advance();
    }
  }

  void comment() {
    std::size_t b = pos_ + 1;
    while (pos_ < s_.size() && peek() != '\n') advance();
    if (last_token_line_ == line_ && !out_.tokens.empty() &&
        out_.tokens.back().kind != Tok::newline)
      out_.trailing_comments[line_] = trim(s_.substr(b, pos_ - b));
  }

  void number() {
    int line = line_, col = col_;
    std::size_t b = pos_;
    while (is_digit(peek())) advance();
    if (peek() == '.') {
      advance();
      while (is_digit(peek())) advance();
    }
    if ((peek() == 'e' || peek() == 'E') &&
        (is_digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit(peek(2))))) {
      advance(2);
      while (is_digit(peek())) advance();
    }
    if (is_ident_char(peek()) || peek() == '.') {
      while (is_ident_char(peek()) || peek() == '.') advance();
      error(line, col, "malformed number '" + std::string(s_.substr(b, pos_ - b)) + "'");
      return push(Tok::number, line, col, "0", 0.0);
    }
    std::string text(s_.substr(b, pos_ - b));
    errno = 0;
    double v = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(v) || (errno == ERANGE && std::fabs(v) > 1.0)) {
      error(line, col, "number " + text + " is too large for double precision");
      v = 0.0;
    }
    push(Tok::number, line, col, text, v);
  }

  void string() {
    int line = line_, col = col_;
    advance();
    std::string text;
    while (true) {
      char c = peek();
      if (pos_ >= s_.size() || c == '\n') {
        error(line, col, "unterminated string (a string ends with \" on the same line)");
        break;
      }
      if (c == '"') {
        advance();
        break;
      }
      if (c == '\\') {
        char e = peek(1);
        if (e == 'n') text += '\n';
        else if (e == 't') text += '\t';
        else if (e == '"' || e == '\\') text += e;
        else error(line_, col_, "unknown escape in string; use \\\" \\\\ \\n or \\t");
        advance(e == '\n' || e == '\0' ? 1 : 2);
        continue;
      }
      text += c;
      advance();
    }
    push(Tok::string, line, col, std::move(text));
  }

  void units() {
    int line = line_, col = col_;
    advance();
    std::size_t b = pos_;
    while (pos_ < s_.size() && peek() != ']' && peek() != '\n' && peek() != '#' &&
           peek() != '[')
      advance();
    if (peek() != ']') {
      error(line, col, "unclosed '[': units end with ']' on the same line");
      return;
    }
    std::string text = trim(s_.substr(b, pos_ - b));
    advance();
    if (text.empty()) {
      error(line, col, "empty units '[]'; leave the brackets out instead");
      return;
    }
    push(Tok::units, line, col, std::move(text));
  }

  void annotation() {
    int line = line_, col = col_;
    advance();
    std::size_t b = pos_;
    while (is_term_char(peek())) advance();
    if (pos_ == b) {
      error(line, col, "'@' must be followed by a metadata term, e.g. @membrane_voltage");
      return;
    }
    push(Tok::annotation, line, col, std::string(s_.substr(b, pos_ - b)));
  }

  static constexpr int kMaxErrors = 20;
  std::string_view s_;
  const std::string& file_;
  DiagnosticSink& sink_;
  LexResult out_;
  std::size_t pos_ = 0;
  int line_ = 1, col_ = 1;
  int depth_ = 0;
  int errors_ = 0;
  int last_token_line_ = 0;
};

}  // namespace

LexResult lex(std::string_view text, const std::string& file, DiagnosticSink& sink) {
  return Lexer(text, file, sink).run();
}

}  // namespace hw::model::hwm
