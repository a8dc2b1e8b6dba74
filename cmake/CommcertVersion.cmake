# The git description goes into meta.json so results say which build produced them.
set(COMMCERT_GIT_DESCRIBE "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty --tags
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE _describe
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _result)
  if(_result EQUAL 0 AND _describe)
    set(COMMCERT_GIT_DESCRIBE "${_describe}")
  endif()
endif()
