# Debian 12 packages only (see DESIGN.md "Chosen dependencies").
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(SQLite3 REQUIRED)
pkg_check_modules(LIBDW REQUIRED IMPORTED_TARGET libdw)
# pprof export: libprotobuf + protoc (libprotobuf-dev, protobuf-compiler), gzip by zlib, and
# pprof's own profile.proto as Debian's golang-github-google-pprof-dev installs it (one copy, the
# one `go tool pprof` is built from, not a transcription of ours).
find_package(Protobuf REQUIRED)
find_package(ZLIB REQUIRED)
find_file(LOCKSCOPE_PPROF_PROTO profile.proto
          PATHS /usr/share/gocode/src/github.com/google/pprof/proto NO_DEFAULT_PATH REQUIRED
          DOC "pprof's profile.proto (Debian: golang-github-google-pprof-dev)")
if(LOCKSCOPE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(LOCKSCOPE_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
