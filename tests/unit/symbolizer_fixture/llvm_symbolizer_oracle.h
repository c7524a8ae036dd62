// Helpers for symbolizer_test.cpp: run the binutils/LLVM tools that serve as the oracle —
// `nm` for function addresses, `llvm-symbolizer` for what the answer should be, `objcopy` to make
// stripped copies — and parse their plain-text output.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace lockscope::symbolizer_oracle {

inline std::string run_command(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  std::array<char, 4096> buffer;
  size_t read = 0;
  while ((read = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    output.append(buffer.data(), read);
  pclose(pipe);
  return output;
}

inline bool tool_exists(const std::string& tool) {
  return !run_command("command -v " + tool + " 2>/dev/null").empty();
}

inline bool file_exists(const std::string& path) {
  struct stat status;
  return stat(path.c_str(), &status) == 0;
}

// This test binary's path.
inline std::string own_executable() {
  char path[4096];
  ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  return length > 0 ? std::string(path, static_cast<size_t>(length)) : std::string();
}

inline std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

struct FunctionSymbol {
  uint64_t start = 0;
  uint64_t size = 0;
  std::string name;  // demangled, as nm -C prints it
};

// Sized text symbols (T/t/W) of `path`; `dynamic` reads .dynsym (for stripped system binaries).
inline std::vector<FunctionSymbol> function_symbols(const std::string& path, bool dynamic = false) {
  std::vector<FunctionSymbol> functions;
  std::istringstream lines(run_command("nm -C -S --defined-only " +
                                       std::string(dynamic ? "-D " : "") + "'" + path +
                                       "' 2>/dev/null"));
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string start, size, type;
    if (!(fields >> start >> size >> type) || type.size() != 1) continue;
    if (type != "T" && type != "t" && type != "W" && type != "i") continue;
    FunctionSymbol function;
    function.start = std::stoull(start, nullptr, 16);
    function.size = std::stoull(size, nullptr, 16);
    std::getline(fields >> std::ws, function.name);
    if (function.size > 0) functions.push_back(function);
  }
  return functions;
}

struct OracleFrame {
  std::string function;
  std::string file;  // base name
  int line = 0;
};

// llvm-symbolizer's frames (innermost first) for each address, in order. Runs in batches so that
// the command line stays short.
inline std::vector<std::vector<OracleFrame>> llvm_symbolizer_frames(
    const std::string& path, const std::vector<uint64_t>& addresses) {
  std::vector<std::vector<OracleFrame>> results;
  constexpr size_t kBatch = 500;
  for (size_t begin = 0; begin < addresses.size(); begin += kBatch) {
    std::string command = "llvm-symbolizer --obj='" + path +
                          "' --inlining --functions=linkage --demangle --output-style=LLVM";
    for (size_t i = begin; i < addresses.size() && i < begin + kBatch; ++i) {
      char hex[32];
      std::snprintf(hex, sizeof hex, " 0x%llx", static_cast<unsigned long long>(addresses[i]));
      command += hex;
    }
    std::istringstream lines(run_command(command + " 2>/dev/null"));
    std::string function_line, location_line;
    std::vector<OracleFrame> frames;
    while (std::getline(lines, function_line)) {
      if (function_line.empty()) {  // a blank line ends one address's frames
        results.push_back(frames);
        frames.clear();
        continue;
      }
      if (!std::getline(lines, location_line)) break;
      // "file:line:column"; the file may itself contain ':' in theory, so split from the right.
      OracleFrame frame;
      frame.function = function_line == "??" ? "" : function_line;
      size_t column_colon = location_line.rfind(':');
      size_t line_colon =
          column_colon == 0 ? std::string::npos : location_line.rfind(':', column_colon - 1);
      if (line_colon != std::string::npos) {
        frame.file = base_name(location_line.substr(0, line_colon));
        frame.line = std::atoi(location_line.substr(line_colon + 1).c_str());
      }
      if (frame.file == "??") frame.file.clear();
      frames.push_back(frame);
    }
  }
  return results;
}

// A scratch directory removed at scope exit.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    char pattern[] = "/tmp/lockscope_symbolizer_XXXXXX";
    if (mkdtemp(pattern) != nullptr) path_ = pattern;
  }
  ~ScratchDirectory() {
    if (!path_.empty()) run_command("rm -rf '" + path_ + "'");
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The GNU build-id note of `path` as lower-case hex, "" when absent.
inline std::string build_id_of(const std::string& path) {
  std::string notes = run_command("readelf -n '" + path + "' 2>/dev/null");
  size_t label = notes.find("Build ID: ");
  if (label == std::string::npos) return {};
  size_t start = label + 10;
  size_t end = notes.find_first_not_of("0123456789abcdef", start);
  return notes.substr(start, end - start);
}

}  // namespace lockscope::symbolizer_oracle
