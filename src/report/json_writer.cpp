#include "report/json_writer.h"

#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "analysis/utf8_repair.h"

namespace lockscope {
namespace {

constexpr size_t kFlushBytes = 64 * 1024;

// What a byte of a string needs: nothing (most), an escape of its own, or a look at the UTF-8
// sequence it starts (bytes >= 0x80).
enum class ByteClass : uint8_t { kPlain, kEscape, kMultiByte };

constexpr std::array<ByteClass, 256> byte_classes(bool script_safe) {
  std::array<ByteClass, 256> classes{};
  for (int c = 0; c < 256; ++c)
    classes[c] = c < 0x20 || c == '"' || c == '\\' ? ByteClass::kEscape
                 : c >= 0x80                       ? ByteClass::kMultiByte
                                                   : ByteClass::kPlain;
  if (script_safe) classes['<'] = classes['>'] = classes['&'] = ByteClass::kEscape;
  return classes;
}
constexpr std::array<ByteClass, 256> kJsonBytes = byte_classes(false);
constexpr std::array<ByteClass, 256> kScriptSafeBytes = byte_classes(true);

void append_escape(std::string& out, unsigned char c) {
  switch (c) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\f':
      out += "\\f";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default: {
      constexpr char kHex[] = "0123456789abcdef";
      const char escape[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
      out.append(escape, sizeof escape);
    }
  }
}

}  // namespace

JsonWriter::JsonWriter(std::ostream& out, Style style) : out_(out), style_(style) {
  buffer_.reserve(kFlushBytes + 4096);
}

JsonWriter::~JsonWriter() {
  if (std::uncaught_exceptions() > uncaught_at_start_) return;  // a failed document: not the rest
  try {
    flush();
  } catch (...) {  // a stream that throws on failure: the report's sink reports it when closed
  }
}

void JsonWriter::flush() {
  out_.write(buffer_.data(), std::streamsize(buffer_.size()));
  buffer_.clear();
}

void JsonWriter::raw(std::string_view text) {
  buffer_ += text;
  if (buffer_.size() >= kFlushBytes) flush();
}

void JsonWriter::newline_and_indent() {
  if (style_.indent < 0) return;
  buffer_ += '\n';
  buffer_.append(levels_.size() * size_t(style_.indent), ' ');
}

// Before any value, or the opening of an object or array: the separator from the one before.
void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) {
    if (started_) throw std::logic_error("JsonWriter: a second top-level value");
    started_ = true;
    return;
  }
  Level& level = levels_.back();
  if (level.scope == Scope::kObject) throw std::logic_error("JsonWriter: a member without its key");
  if (!level.empty) buffer_ += ',';
  level.empty = false;
  newline_and_indent();
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (levels_.empty() || levels_.back().scope != Scope::kObject || after_key_)
    throw std::logic_error("JsonWriter: a key outside an object");
  Level& level = levels_.back();
  if (!level.empty) buffer_ += ',';
  level.empty = false;
  newline_and_indent();
  quoted(name);
  buffer_ += style_.indent < 0 ? ":" : ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  buffer_ += '{';
  levels_.push_back({Scope::kObject});
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  buffer_ += '[';
  levels_.push_back({Scope::kArray});
  return *this;
}

void JsonWriter::end(Scope scope, char closing) {
  if (levels_.empty() || levels_.back().scope != scope || after_key_)
    throw std::logic_error("JsonWriter: an end without its beginning");
  const bool empty = levels_.back().empty;
  levels_.pop_back();
  if (!empty) newline_and_indent();
  buffer_ += closing;
  if (buffer_.size() >= kFlushBytes) flush();
}

JsonWriter& JsonWriter::end_object() {
  end(Scope::kObject, '}');
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  end(Scope::kArray, ']');
  return *this;
}

void JsonWriter::quoted(std::string_view text) {
  const std::array<ByteClass, 256>& classes = style_.script_safe ? kScriptSafeBytes : kJsonBytes;
  buffer_ += '"';
  size_t plain_from = 0;  // the run of bytes written as they are
  size_t at = 0;
  while (at < text.size()) {
    const auto c = static_cast<unsigned char>(text[at]);
    const ByteClass kind = classes[c];
    if (kind == ByteClass::kPlain) {
      ++at;
      continue;
    }
    if (kind == ByteClass::kMultiByte) {
      if (const size_t length = valid_sequence_at(text, at)) {
        at += length;
        continue;
      }
    }
    buffer_.append(text.data() + plain_from, at - plain_from);
    if (kind == ByteClass::kEscape)
      append_escape(buffer_, c);
    else
      buffer_ += "\xEF\xBF\xBD";  // U+FFFD for a byte outside a valid sequence
    plain_from = ++at;
  }
  buffer_.append(text.data() + plain_from, text.size() - plain_from);
  buffer_ += '"';
  if (buffer_.size() >= kFlushBytes) flush();
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  quoted(text);
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  raw(flag ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::value(std::nullptr_t) {
  before_value();
  raw("null");
  return *this;
}

template <typename Integer>
JsonWriter& JsonWriter::integer_value(Integer number) {
  before_value();
  char digits[24];  // INT64_MIN and UINT64_MAX fit
  const auto end = std::to_chars(digits, digits + sizeof digits, number).ptr;
  raw(std::string_view(digits, size_t(end - digits)));
  return *this;
}

JsonWriter& JsonWriter::unsigned_value(uint64_t number) {
  return integer_value(number);
}
JsonWriter& JsonWriter::signed_value(int64_t number) {
  return integer_value(number);
}

JsonWriter& JsonWriter::value(double number) {
  if (!std::isfinite(number)) return value(nullptr);  // JSON has no NaN or infinity
  before_value();
  char digits[40];
  char* end = std::to_chars(digits, digits + sizeof digits - 2, number).ptr;
  if (std::string_view(digits, size_t(end - digits)).find_first_of(".e") ==
      std::string_view::npos) {
    *end++ = '.';  // 1500.0, not 1500: still a floating-point number to a typed reader
    *end++ = '0';
  }
  raw(std::string_view(digits, size_t(end - digits)));
  return *this;
}

void JsonWriter::finish() {
  if (!levels_.empty() || after_key_)
    throw std::logic_error("JsonWriter: the document ends inside an object or array");
  flush();
}

}  // namespace lockscope
