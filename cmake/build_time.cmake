# Build time on a 2-core machine (issue: demo command <= 2 min, test command <= 6 min). Full DWARF
# (-g) and -O2 are kept for the runtime, whose speed is what bench/overhead measures and whose
# locals a debugger of a profiled program may want. Elsewhere, in the default (RelWithDebInfo)
# build only — the sanitizer presets are Debug already:
#
# - lockscope_lean_debug_info(target): -g1 (functions and line tables, enough for a backtrace with
#   file:line; no types or locals), keeping -O2: the CLI, analysis and report writers (the report's
#   speed is measured; text_report.cpp compiles in 4.4 s instead of 5.4, profile_commands.cpp 8.1
#   instead of 11.4) and the lab, which measures locks (bench_command.cpp 14 s instead of 22).
# - lockscope_test_code(target): -O0 -g1 for test code, which runs subprocesses and compares
#   results and whose own speed does not matter (the code it tests is built apart, -O2 -g):
#   a gtest translation unit compiles in ~4.6 s instead of ~10. lockscope_full_debug_info(files)
#   keeps -O2 -g for the test files that symbolize the test program itself (inline frames, the
#   llvm-symbolizer oracle over every function).
# - lockscope_option_parsing_code(files): -O1 -g for the files that declare command lines (CLI11)
#   and format their results, whose speed nothing measures: CLI11's templates take most of their
#   time at -O2 (profile_commands.cpp 14.6 s -> 10.2 s, bench_command.cpp 14.1 s -> 9.7 s).
set(lockscope_release_config "$<CONFIG:RelWithDebInfo>")

function(lockscope_lean_debug_info target)
  target_compile_options(${target} PRIVATE $<${lockscope_release_config}:-g1>)
endfunction()

function(lockscope_test_code target)
  target_compile_options(${target} PRIVATE $<${lockscope_release_config}:-O0 -g1>)
endfunction()

function(lockscope_full_debug_info)
  set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS
                              "$<${lockscope_release_config}:-O2;-g>" SKIP_PRECOMPILE_HEADERS ON)
endfunction()

function(lockscope_option_parsing_code)
  set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS
                              "$<${lockscope_release_config}:-O1>" SKIP_PRECOMPILE_HEADERS ON)
endfunction()

# lockscope_precompile(target HEADERS...): the heavy headers every translation unit of `target`
# parses (gtest, nlohmann-json, fmt, the standard library), parsed once into a precompiled header
# instead of once per file. Files given their own flags (lockscope_full_debug_info) are left out:
# a precompiled header only serves files compiled with its flags.
function(lockscope_precompile target)
  target_precompile_headers(${target} PRIVATE ${ARGN})
endfunction()
