# Precompiled headers: the third-party headers that most translation units parse (fmt everywhere,
# nlohmann/json and CLI11 where they are used, Catch2 in every test), parsed once per PCH instead
# of once per file. Modules without a heavy header of their own reuse one shared PCH (REUSE_FROM:
# one .gch for all of them), the unit tests reuse the first test binary's. Turn off with
# -DBOOTSTRAP_PCH=OFF (or CMake's own CMAKE_DISABLE_PRECOMPILE_HEADERS).
option(BOOTSTRAP_PCH "Precompile the heavy third-party headers (fmt, nlohmann/json, CLI11, Catch2)" ON)

# ccache caches a compile that uses a PCH only when told to accept what a PCH makes it unable to
# check (ccache's manual, "Precompiled headers"); without this every such compile is a miss.
if(BOOTSTRAP_PCH AND NOT CMAKE_DISABLE_PRECOMPILE_HEADERS AND CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache$")
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      ${CMAKE_CXX_COMPILER_LAUNCHER})
endif()

# What nearly every file includes anyway: cheap to add, and each one parsed once.
set(BS_PCH_COMMON <string> <string_view> <vector> <map> <optional> <filesystem> <functional>
    <memory> <utility> <tl/expected.hpp> <fmt/format.h>)

# The shared PCH belongs to bs_pch, an object library of one empty file that has only the
# defines every module has (fmt's, from core's PUBLIC link): GCC refuses a PCH built with a
# define that the file using it lacks (core's private spdlog defines, say), but not the reverse.
if(BOOTSTRAP_PCH)
  file(WRITE ${CMAKE_BINARY_DIR}/generated/pch.cpp "// the shared precompiled header's owner\n")
  add_library(bs_pch OBJECT ${CMAKE_BINARY_DIR}/generated/pch.cpp)
  target_link_libraries(bs_pch PRIVATE tl::expected ${BS_FMT})
  target_precompile_headers(bs_pch PRIVATE ${BS_PCH_COMMON})
endif()

# bs_module_pch(TARGET THIRD_PARTY...): TARGET's PCH, given the third-party libraries it owns.
function(bs_module_pch target)
  if(NOT BOOTSTRAP_PCH)
    return()
  endif()
  set(own)
  if("nlohmann_json::nlohmann_json" IN_LIST ARGN)
    list(APPEND own <nlohmann/json.hpp>)
  endif()
  if("CLI11::CLI11" IN_LIST ARGN)
    list(APPEND own <CLI/CLI.hpp>)
  endif()
  if(own)
    target_precompile_headers(${target} PRIVATE ${BS_PCH_COMMON} ${own})
  else()
    target_precompile_headers(${target} REUSE_FROM bs_pch)
  endif()
endfunction()

# bs_test_pch(TARGET): the unit tests' PCH (Catch2 + the common headers), owned by an object
# library of one empty file (as bs_pch is for the modules), so that building one test binary
# builds only that PCH, not another test binary. (Not on bs_catch_main: catch_main.cpp defines
# CATCH_CONFIG_MAIN before including Catch2, and CMake cannot reuse the PCH of an object library
# whose only source skips it.)
function(bs_test_pch target)
  if(NOT BOOTSTRAP_PCH)
    return()
  endif()
  if(NOT TARGET bs_test_pch_owner)
    file(WRITE ${CMAKE_BINARY_DIR}/generated/test_pch.cpp "// the unit tests' precompiled header's owner\n")
    add_library(bs_test_pch_owner OBJECT ${CMAKE_BINARY_DIR}/generated/test_pch.cpp)
    target_link_libraries(bs_test_pch_owner PRIVATE tl::expected ${BS_FMT} Catch2::Catch2)
    target_precompile_headers(bs_test_pch_owner PRIVATE ${BS_PCH_COMMON} <catch2/catch.hpp>)
  endif()
  target_precompile_headers(${target} REUSE_FROM bs_test_pch_owner)
endfunction()
