// JsonWriter against the reference it replaced: nlohmann-json's dump of the same values, byte for
// byte, on random documents (nested objects and arrays, integers, booleans, null, strings of any
// UTF-8 text: controls, quotes, multi-byte characters), indented and compact; each byte outside a
// valid UTF-8 sequence becomes one U+FFFD; doubles read back exactly; misuse throws.
#include "report/json_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

namespace lockscope {
namespace {

using nlohmann::json;

std::string random_string(std::mt19937_64& random) {
  static const std::vector<std::string> kPieces = {
      "a",    "lock", " ",    "\"", "\\", "\n", "\t",
      "\x01", "\x1f", "\x7f", "<",  ">",  "&",  "/",
      "é",    "€",    "😀",    "\b", "\f", "\r", "mutex 0x55d1c0 (main.cpp:42)"};
  std::string text;
  const size_t pieces = random() % 6;
  for (size_t i = 0; i < pieces; ++i) text += kPieces[random() % kPieces.size()];
  return text;
}

json random_document(std::mt19937_64& random, int depth) {
  switch (random() % (depth > 4 ? 5 : 7)) {
    case 0:
      return nullptr;
    case 1:
      return random() % 2 == 0;
    case 2:
      return static_cast<uint64_t>(random()) >> (random() % 64);
    case 3:
      return -static_cast<int64_t>(random() >> (1 + random() % 63));
    case 4:
      return random_string(random);
    case 5: {
      json array = json::array();
      for (size_t n = random() % 4; n > 0; --n) array.push_back(random_document(random, depth + 1));
      return array;
    }
    default: {
      json object = json::object();
      for (size_t n = random() % 4; n > 0; --n)
        object[random_string(random)] = random_document(random, depth + 1);
      return object;
    }
  }
}

// Writes `value` through `w` as it is (nlohmann's objects iterate in key order, as dump prints).
void write(JsonWriter& w, const json& value) {
  if (value.is_null()) {
    w.value(nullptr);
  } else if (value.is_boolean()) {
    w.value(value.get<bool>());
  } else if (value.is_number_unsigned()) {
    w.value(value.get<uint64_t>());
  } else if (value.is_number_integer()) {
    w.value(value.get<int64_t>());
  } else if (value.is_string()) {
    w.value(value.get_ref<const std::string&>());
  } else if (value.is_array()) {
    w.begin_array();
    for (const json& item : value) write(w, item);
    w.end_array();
  } else {
    w.begin_object();
    for (const auto& [key, item] : value.items()) {
      w.key(key);
      write(w, item);
    }
    w.end_object();
  }
}

std::string written(const json& value, JsonWriter::Style style) {
  std::ostringstream out;
  {
    JsonWriter w(out, style);
    write(w, value);
    w.finish();
  }
  return out.str();
}

std::string script_safe(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else
      out += c;
  }
  return out;
}

TEST(JsonWriter, WritesWhatNlohmannDumpWritesForRandomDocuments) {
  std::mt19937_64 random(20261202);
  for (int i = 0; i < 3000; ++i) {
    const json document = random_document(random, 0);
    const auto dump = [&](int indent) {
      return document.dump(indent, ' ', false, json::error_handler_t::replace);
    };
    ASSERT_EQ(written(document, {.indent = 2}), dump(2)) << "document " << i;
    ASSERT_EQ(written(document, {.indent = -1}), dump(-1)) << "document " << i;
    ASSERT_EQ(written(document, {.indent = -1, .script_safe = true}), script_safe(dump(-1)));
  }
}

// Profile strings are repaired before any writer sees them (utf8_repair.h); the writer's own
// replacement is the last guard that keeps its output valid JSON whatever it is given: one U+FFFD
// per byte that does not start a valid sequence, the bytes after it read again on their own.
TEST(JsonWriter, EachByteOutsideAValidSequenceBecomesOneReplacementCharacter) {
  const auto quoted = [](std::string_view text) {
    std::ostringstream out;
    JsonWriter(out, {}).value(text).finish();
    return out.str();
  };
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(quoted("caf\xe9"), "\"caf" + r + "\"");
  EXPECT_EQ(quoted("\xc3"), "\"" + r + "\"");                  // cut before its second byte
  EXPECT_EQ(quoted("\xc3\xc3\xa9"), "\"" + r + "é\"");         // the second lead is valid
  EXPECT_EQ(quoted("\xed\xa0\x80"), "\"" + r + r + r + "\"");  // a surrogate
  EXPECT_EQ(quoted("\xc0\xaf"), "\"" + r + r + "\"");          // overlong '/'
  EXPECT_EQ(quoted("\xf4\x90\x80\x80x"), "\"" + r + r + r + r + "x\"");  // above U+10FFFF
  EXPECT_EQ(quoted("\x80\xff"), "\"" + r + r + "\"");
  EXPECT_EQ(quoted("😀\xf0\x9f\x98"), "\"😀" + r + r + r + "\"");
  EXPECT_EQ(quoted("\x1f\x7f"), "\"\\u001f\x7f\"");  // controls are escaped, DEL is valid JSON
  for (const std::string& bad :
       {std::string("\xe9"), std::string("\xed\xa0\x80"), std::string("\xff")})
    EXPECT_NO_THROW(json::parse(quoted("a" + bad + "b")));
}

TEST(JsonWriter, ALongDocumentIsFlushedWhole) {  // many times the 64 KiB buffer
  json array = json::array();
  for (int i = 0; i < 50000; ++i)
    array.push_back({{"index", i}, {"name", "lock é " + std::to_string(i)}});
  EXPECT_EQ(written(array, {.indent = 2}), array.dump(2));
}

TEST(JsonWriter, DoublesReadBackExactlyAndStayFloatingPoint) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> any(-1e6, 1e6);
  std::vector<double> numbers = {0.0,  -0.0, 1.0,           1500.0, 0.1,
                                 1e-7, 1e21, 123456789.125, 5e-324, 1.7976931348623157e308};
  for (int i = 0; i < 1000; ++i) numbers.push_back(any(random));
  for (double number : numbers) {
    std::ostringstream out;
    JsonWriter(out, {}).value(number).finish();
    const json parsed = json::parse(out.str());
    ASSERT_TRUE(parsed.is_number_float()) << out.str();
    EXPECT_EQ(parsed.get<double>(), number) << out.str();
  }
  std::ostringstream out;
  JsonWriter(out, {})
      .begin_array()
      .value(1500.0)
      .value(0.25)
      .value(std::nan(""))
      .end_array()
      .finish();
  EXPECT_EQ(out.str(), "[\n  1500.0,\n  0.25,\n  null\n]");
}

TEST(JsonWriter, MisuseThrowsInsteadOfWritingInvalidJson) {
  std::ostringstream out;
  EXPECT_THROW(JsonWriter(out, {}).begin_object().value(1), std::logic_error);  // no key
  EXPECT_THROW(JsonWriter(out, {}).begin_array().key("a"), std::logic_error);   // key in array
  EXPECT_THROW(JsonWriter(out, {}).begin_array().end_object(), std::logic_error);
  EXPECT_THROW(JsonWriter(out, {}).begin_object().key("a").end_object(), std::logic_error);
  EXPECT_THROW(JsonWriter(out, {}).value(1).value(2), std::logic_error);  // two documents
  EXPECT_THROW(JsonWriter(out, {}).begin_object().finish(), std::logic_error);
}

// A document given up on by an exception is not completed on the stream: what the writer still
// held is dropped; a writer destroyed normally flushes all it holds.
TEST(JsonWriter, AnExceptionMidDocumentWritesNoMoreOfIt) {
  std::ostringstream out;
  try {
    JsonWriter w(out, {});
    w.begin_array().value("first");
    throw std::runtime_error("symbolization failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(out.str(), "");
  {
    JsonWriter w(out, {});
    w.begin_array().value("kept");
  }
  EXPECT_EQ(out.str(), "[\n  \"kept\"");
}

}  // namespace
}  // namespace lockscope
