# Which commit a binary was built from goes into --version and meta.json. It is stamped at build
# time, not configure time: a build directory configured once and rebuilt after later commits
# (a developer's, or the one a release bundle is packaged from) must not report the first commit.
#
# Included: sets COMMCERT_GIT_DESCRIBE for the configure summary.
# Script mode (cmake -DSOURCE_DIR=... -DOUTPUT=... -P CommcertVersion.cmake): writes the C++
# definition of build_info::kGitDescribe to OUTPUT, touching it only when the text changes, so an
# unchanged commit recompiles and relinks nothing.

function(commcert_git_describe source_dir out_var)
  set(_describe "unknown")
  find_package(Git QUIET)
  if(GIT_FOUND)
    execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty --tags
      WORKING_DIRECTORY ${source_dir} OUTPUT_VARIABLE _out
      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _result)
    if(_result EQUAL 0 AND _out)
      set(_describe "${_out}")
    endif()
  endif()
  set(${out_var} "${_describe}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  if(NOT SOURCE_DIR OR NOT OUTPUT)
    message(FATAL_ERROR "CommcertVersion.cmake: script mode needs -DSOURCE_DIR= and -DOUTPUT=")
  endif()
  commcert_git_describe("${SOURCE_DIR}" _describe)
  set(_text "// Generated at build time by cmake/CommcertVersion.cmake.\n#include \"core/build_info.hpp\"\n\nnamespace commcert::build_info {\nconst char* const kGitDescribe = \"${_describe}\";\n}  // namespace commcert::build_info\n")
  set(_old "")
  if(EXISTS "${OUTPUT}")
    file(READ "${OUTPUT}" _old)
  endif()
  if(NOT _old STREQUAL _text)
    file(WRITE "${OUTPUT}" "${_text}")
  endif()
else()
  commcert_git_describe("${PROJECT_SOURCE_DIR}" COMMCERT_GIT_DESCRIBE)
endif()
