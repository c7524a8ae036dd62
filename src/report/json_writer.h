// A streaming JSON writer: each value is written as it is given, into a buffer flushed to the
// stream every 64 KiB, with no document tree in memory. The json and html reports of a server's
// profile (20,000 call sites, ~40 MB of JSON) spent ~60 % of their time building, dumping and
// freeing nlohmann-json's DOM; they write through this instead.
//
// The output is what nlohmann::json::dump would print for the same values, in the order given:
// indented by `indent` spaces per level (or compact on one line when `indent` is negative), empty
// objects and arrays as {} and [], strings escaped as dump escapes them (", \, \b \f \n \r \t and
// other C0 controls as \u00XX; UTF-8 left as it is). A byte that is not part of a valid UTF-8
// sequence is written U+FFFD, one per byte (dump's error_handler_t::replace writes one for a cut
// multi-byte prefix; profile strings are repaired before any writer sees them, utf8_repair.h, so
// this only keeps the output valid JSON whatever it is given). A double is written as its shortest
// round-trip decimal (std::to_chars), with ".0" when it would otherwise read as an integer; NaN and
// infinity as null. In `script_safe` mode '<', '>' and '&' are written \u003c, \u003e, \u0026, so
// the text can stand inside an html <script> element (they only occur inside strings).
//
// The caller gives the structure: key() before each member of an object, values alone in an
// array. A misuse (a value without its key in an object, an unbalanced end) is a programming error
// and throws std::logic_error, which the CLI's top-level catch reports. The writer flushes what it
// holds when destroyed, except while an exception unwinds: the report's sink then discards its
// temporary file (report_file.h); on stdout what was flushed before stays written.
#pragma once

#include <concepts>
#include <cstdint>
#include <exception>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace lockscope {

class JsonWriter {
 public:
  struct Style {
    int indent = 2;  // spaces per level; negative: compact, one line
    bool script_safe = false;
  };
  JsonWriter(std::ostream& out, Style style);
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;
  ~JsonWriter();  // flushes what is buffered (finish() first to learn of an unbalanced document)

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(bool flag);
  JsonWriter& value(std::nullptr_t);
  JsonWriter& value(double number);
  template <std::integral T>
  requires(!std::same_as<T, bool> && !std::same_as<T, char>) JsonWriter& value(T number) {
    if constexpr (std::signed_integral<T>)
      return signed_value(number);
    else
      return unsigned_value(number);
  }
  // An array of the values of a range.
  template <typename Range>
  JsonWriter& values(const Range& range) {
    begin_array();
    for (const auto& item : range) value(item);
    return end_array();
  }

  // key(name) then the value, or the opening of the object or array.
  template <typename T>
  JsonWriter& field(std::string_view name, const T& item) {
    key(name);
    return value(item);
  }
  JsonWriter& object(std::string_view name) { return key(name).begin_object(); }
  JsonWriter& array(std::string_view name) { return key(name).begin_array(); }

  // Checks that every object and array was closed and flushes; throws std::logic_error if not.
  void finish();

 private:
  enum class Scope : uint8_t { kObject, kArray };
  struct Level {
    Scope scope;
    bool empty = true;
  };
  void before_value();
  void newline_and_indent();
  JsonWriter& unsigned_value(uint64_t number);
  JsonWriter& signed_value(int64_t number);
  template <typename Integer>
  JsonWriter& integer_value(Integer number);  // unsigned_value and signed_value
  void raw(std::string_view text);
  void quoted(std::string_view text);
  void end(Scope scope, char closing);
  void flush();

  std::ostream& out_;
  Style style_;
  std::string buffer_;
  std::vector<Level> levels_;
  bool after_key_ = false;  // a key was written: the next thing is its value
  bool started_ = false;    // the top-level value has begun
  int uncaught_at_start_ = std::uncaught_exceptions();
};

}  // namespace lockscope
