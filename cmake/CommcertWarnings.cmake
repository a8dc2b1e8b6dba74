# Warnings live on an interface target so third-party code is never compiled with them.
add_library(commcert_warnings INTERFACE)
add_library(commcert::warnings ALIAS commcert_warnings)
target_compile_options(commcert_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
  -Wimplicit-fallthrough>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
if(COMMCERT_WARNINGS_AS_ERRORS)
  target_compile_options(commcert_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Werror> $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
endif()
# Debug builds (the sanitizer build CI tests, and scripts/mutation's build) check libstdc++'s
# preconditions: an empty std::optional read, an index past a vector's end, an erase with its
# range reversed all abort the test that does it, instead of reading whatever memory holds.
target_compile_definitions(commcert_warnings INTERFACE
  $<$<AND:$<CONFIG:Debug>,$<COMPILE_LANGUAGE:CXX>>:_GLIBCXX_ASSERTIONS>)
if(COMMCERT_SANITIZE)
  target_compile_options(commcert_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${COMMCERT_SANITIZE} -fno-omit-frame-pointer>)
  target_link_options(commcert_warnings INTERFACE -fsanitize=${COMMCERT_SANITIZE})
  # GCC's -Wmaybe-uninitialized reports false positives in instrumented code (libstdc++'s
  # std::regex under ASan/UBSan); the uninstrumented full build keeps it as an error.
  target_compile_options(commcert_warnings INTERFACE
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-maybe-uninitialized>)
endif()
# GCC 12 at -O3 (Release, the bundle) reports -Wrestrict inside libstdc++'s std::string for
# ordinary assignments (GCC bug 105651, fixed in 13): keep it a warning there, not an error.
target_compile_options(commcert_warnings INTERFACE
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-error=restrict>)
