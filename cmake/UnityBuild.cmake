# Unity builds: a target's sources are joined a few at a time
# (UNITY_BUILD_BATCH_SIZE) into one translation unit each, so the headers they
# share (GoogleTest, Boost.Asio's coroutines, nfsgw's layer headers) are parsed
# and their templates instantiated once a batch instead of once a source.
# Sources of one target must therefore not define the same name twice at
# namespace scope, anonymous namespaces and file-static functions included: a
# file keeps its helpers in a namespace named after the file, or in a shared
# header. -DNFSGW_UNITY=OFF builds one source at a time (to check a file's own
# includes, or a name that would clash). Called once from the top-level
# CMakeLists.txt after every target exists.
#
# Batches of 8: large enough that a library of 10 sources is 2 translation units
# instead of 10, small enough that both cores still find work on CI's 2-core
# machine and that editing one file recompiles a handful, not a library.

function(nfsgw_unity_target t)
  set_target_properties(${t} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  # GCC treats the joined sources as headers of the unity file and warns of
  # their anonymous-namespace types inside coroutine frames; not a fault here.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${t} PRIVATE -Wno-subobject-linkage)
  endif()
endfunction()

# Every library and program defined under DIR and its subdirectories.
function(nfsgw_unity_targets_under dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type MATCHES "^(STATIC_LIBRARY|EXECUTABLE)$")
      nfsgw_unity_target(${t})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(d ${subdirs})
    nfsgw_unity_targets_under(${d})
  endforeach()
endfunction()

function(nfsgw_unity_build)
  foreach(dir protocol config cache gateway tools tests)
    if(EXISTS ${CMAKE_SOURCE_DIR}/${dir}/CMakeLists.txt)
      get_property(subdirs DIRECTORY ${CMAKE_SOURCE_DIR} PROPERTY SUBDIRECTORIES)
      if(${CMAKE_SOURCE_DIR}/${dir} IN_LIST subdirs)
        nfsgw_unity_targets_under(${CMAKE_SOURCE_DIR}/${dir})
      endif()
    endif()
  endforeach()
endfunction()
