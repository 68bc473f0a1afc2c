# Precompiled headers for the unit-test binaries with many sources: GoogleTest in
# every one of their sources, and Boost.Asio where nearly all of them use it.
# Parsing those headers is a large share of each of these small translation
# units; measured on the -g1 CI build, the gtest-only targets took 43-58% less
# CPU including the PCH. Libraries and programs get none: with Asio alone the
# PCH (8 s to build) saved about what it cost. Only third-party headers go in
# (never libnfs's or libtirpc's: they clash), so editing nfsgw's own headers
# never rebuilds a PCH. The PCH is force-included into every source of its
# target; -DNFSGW_PCH=OFF turns them off (e.g. to check a test's includes).
# Called once from the top-level CMakeLists.txt after every target exists; a
# target missing from the build is skipped.
function(nfsgw_precompile_headers)
  # Boost 1.74's Asio under C++20 needs <utility> before it.
  set(asio_gtest <utility> <boost/asio.hpp> <gtest/gtest.h>)
  set(gtest <gtest/gtest.h>)
  set(gtest_targets nfsgw_cache_tests nfsgw_config_tests nfsgw_protocol_tests)
  set(asio_gtest_targets nfsgw_metacache_tests nfsgw_upstream_tests
      nfsgw_datacache_tests nfsgw_gateway_unit_tests)
  foreach(kind gtest asio_gtest)
    foreach(t ${${kind}_targets})
      if(TARGET ${t})
        target_precompile_headers(${t} PRIVATE ${${kind}})
      endif()
    endforeach()
  endforeach()
endfunction()
