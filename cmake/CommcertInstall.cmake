# Install rules of the release bundle (scripts/package); `cmake --install` onto any prefix gives
# the same tree.
install(TARGETS commcert RUNTIME DESTINATION bin)
if(TARGET commcert_mpi_plugin)
  install(TARGETS commcert_mpi_plugin LIBRARY DESTINATION lib)
endif()
install(PROGRAMS scripts/selftest DESTINATION bin RENAME commcert-selftest OPTIONAL)
install(PROGRAMS scripts/selftest-report DESTINATION libexec/commcert RENAME selftest-report
        OPTIONAL)
install(FILES scripts/selftest_common.py scripts/selftest_sweep_time.py
        DESTINATION libexec/commcert OPTIONAL)  # the report writer's modules, imported from its directory
# What the self-test runs beside commcert: the plain cuBLASLt GEMM and the GPU unit tests.
foreach(helper commcert_plain_gemm commcert_gpu_tests commcert_gpu_stage_gpu_tests)
  if(TARGET ${helper})
    set_target_properties(${helper} PROPERTIES INSTALL_RPATH "$ORIGIN/../../lib")
    target_link_options(${helper} PRIVATE LINKER:--disable-new-dtags)
    install(TARGETS ${helper} RUNTIME DESTINATION libexec/commcert)
  endif()
endforeach()
install(DIRECTORY suites/ DESTINATION share/commcert/suites)
install(DIRECTORY scripts/slurm/ DESTINATION share/commcert/slurm USE_SOURCE_PERMISSIONS)
install(DIRECTORY docs/ DESTINATION share/commcert/docs)
install(FILES README.md DESTINATION share/commcert)
