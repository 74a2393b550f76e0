// SPDX-License-Identifier: Apache-2.0
// A minimal protobuf text-format parser for CheckpointState. It accepts what
// TF's text printer writes plus the general grammar a hand edit may use:
// comments, ';'/',' separators, [a, b] lists, adjacent-string concatenation,
// C escapes (octal up to 3 digits, hex up to 2), and nested unknown messages.
#include "converter/frontend/checkpoint/checkpoint_state.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include "converter/ir/error.h"

namespace floe::conv::ckpt {
namespace {

constexpr int kMaxNesting = 64;

class StateParser {
 public:
  StateParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  CheckpointState parse() {
    CheckpointState state;
    parse_fields(state, 0, '\0');
    return state;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ConvertError(name_ + ":" + std::to_string(line_) + ": " + what);
  }

  void skip_space() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else {
        return;
      }
    }
  }

  bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }

  bool consume(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  std::string identifier() {
    skip_space();
    const size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '[') {  // extension or Any type URL: ignored later
      const size_t close = text_.find(']', pos_);
      if (close == std::string_view::npos) fail("unterminated '[' in field name");
      pos_ = close + 1;
      return std::string(text_.substr(start, pos_ - start));
    }
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    if (pos_ == start) fail("expected a field name");
    return std::string(text_.substr(start, pos_ - start));
  }

  static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // One quoted string; the opening quote is at pos_.
  void append_quoted(std::string& out) {
    const char quote = text_[pos_++];
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') fail("unterminated string");
      const char c = text_[pos_++];
      if (c == quote) return;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'v':
          out += '\v';
          break;
        case '\\':
        case '\'':
        case '"':
        case '?':
          out += e;
          break;
        case 'x': {
          int value = 0, digits = 0;
          while (digits < 2 && pos_ < text_.size() && hex_value(text_[pos_]) >= 0) {
            value = value * 16 + hex_value(text_[pos_++]);
            ++digits;
          }
          if (digits == 0) fail("\\x escape without hex digits");
          out += static_cast<char>(value);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            int value = e - '0', digits = 1;
            while (digits < 3 && pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '7') {
              value = value * 8 + (text_[pos_++] - '0');
              ++digits;
            }
            out += static_cast<char>(value & 0xFF);
          } else {
            fail(std::string("unknown escape \\") + e);
          }
      }
    }
  }

  // A scalar value: string(s) are returned concatenated; other tokens are skipped.
  bool scalar(std::string& out) {
    skip_space();
    if (pos_ >= text_.size()) fail("expected a value");
    if (text_[pos_] == '"' || text_[pos_] == '\'') {
      out.clear();
      while (pos_ < text_.size() && (text_[pos_] == '"' || text_[pos_] == '\'')) {
        append_quoted(out);
        skip_space();
      }
      return true;
    }
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '-' ||
            text_[pos_] == '+' || text_[pos_] == '.' || text_[pos_] == '_')) {
      ++pos_;
    }
    if (pos_ == start) fail(std::string("unexpected character '") + text_[pos_] + "'");
    return false;
  }

  void parse_fields(CheckpointState& state, int depth, char closer) {
    if (depth > kMaxNesting) fail("messages nested too deeply");
    while (true) {
      if (closer == '\0' ? at_end() : consume(closer)) return;
      if (at_end()) fail(std::string("missing '") + closer + "'");
      const std::string field = identifier();
      const bool has_colon = consume(':');
      skip_space();
      if (pos_ < text_.size() && (text_[pos_] == '{' || text_[pos_] == '<')) {
        const char open = text_[pos_++];
        CheckpointState ignored;  // unknown nested message
        parse_fields(ignored, depth + 1, open == '{' ? '}' : '>');
      } else {
        if (!has_colon) fail("expected ':' after '" + field + "'");
        if (consume('[')) {
          if (!consume(']')) {
            do {
              store(state, field, depth);
            } while (consume(','));
            if (!consume(']')) fail("expected ']'");
          }
        } else {
          store(state, field, depth);
        }
      }
      if (!consume(';')) consume(',');
    }
  }

  void store(CheckpointState& state, const std::string& field, int depth) {
    std::string value;
    const bool is_string = scalar(value);
    if (depth != 0) return;
    const bool is_path = field == "model_checkpoint_path" || field == "all_model_checkpoint_paths";
    if (is_path && !is_string) fail("'" + field + "' must be a quoted string");
    if (field == "model_checkpoint_path") state.model_checkpoint_path = value;
    if (field == "all_model_checkpoint_paths") state.all_model_checkpoint_paths.push_back(value);
  }

  std::string_view text_;
  const std::string& name_;
  size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

CheckpointState parse_checkpoint_state(std::string_view text, const std::string& file_name) {
  return StateParser(text, file_name).parse();
}

CheckpointState read_checkpoint_state_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConvertError(path + ": cannot open checkpoint state file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_checkpoint_state(text.str(), path);
}

}  // namespace floe::conv::ckpt
