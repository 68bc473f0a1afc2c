# Unity builds for the unit-test binaries: their sources are joined a few at a
# time (UNITY_BUILD_BATCH_SIZE) into one translation unit each, so GoogleTest,
# Boost.Asio's coroutines and nfsgw's layer headers are parsed and instantiated
# once a batch instead of once a source. Test files must therefore not define
# the same name twice at namespace scope, anonymous namespaces included: each
# test file keeps its helpers in a namespace named after the file, or in a
# shared header. -DNFSGW_UNITY=OFF builds them one source at a time (to check a
# file's own includes). Called once from the top-level CMakeLists.txt after
# every target exists; a target missing from the build is skipped.
function(nfsgw_unity_build_tests)
  set(targets nfsgw_reload_unit_tests nfsgw_protocol_tests nfsgw_config_tests nfsgw_cache_tests nfsgw_metacache_tests
      nfsgw_datacache_tests nfsgw_gateway_unit_tests nfsgw_admin_unit_tests nfsgw_warm_unit_tests
      nfsgw_metrics_unit_tests nfsgw_wanemu_tests)
  foreach(t ${targets})
    if(TARGET ${t})
      set_target_properties(${t} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
      # GCC treats the joined sources as headers of the unity file and warns of
      # their anonymous-namespace types inside coroutine frames; not a fault here.
      if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        target_compile_options(${t} PRIVATE -Wno-subobject-linkage)
      endif()
    endif()
  endforeach()
endfunction()
