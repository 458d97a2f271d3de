# Installation: `cmake --install build --prefix P` (or `make install PREFIX=P`) gives
#
#   P/bin      sluicerun (also as mpirun and mpiexec), sluice-bench, sluice-info,
#              sluice-demo, sluice-scale, mpicc, mpicxx, mpifort (also mpif90, mpif77)
#   P/include  mpi.h, mpif.h, mpi.mod (gfortran), sluice/*.hpp (the public C++ API)
#   P/lib      libmpi.so / libmpi.a (MPI), libmpifort.so / libmpifort.a (Fortran MPI),
#              libsluice.so / libsluice.a (native API),
#              pkgconfig/sluice.pc, cmake/Sluice/SluiceConfig.cmake (Sluice::sluice)
#
# Everything installed is relocatable: the wrappers, the pkg-config file and the CMake
# package find the prefix from where they are, never from the build tree. Included from
# the top CMakeLists.txt after src/ and tools/; tests/install checks the result.

# ---- libsluice.so: every object of build/lib/libsluice.a ----------------------------------
# libsluice.a is the `sluice` static library itself, or (one library per layer) the archive
# merged from the layers by target sluice_archive; link the layers' own dependencies after it.
set(SLUICE_LIBSLUICE_A ${CMAKE_ARCHIVE_OUTPUT_DIRECTORY}/libsluice.a)
if(TARGET sluice_api)
  set(SLUICE_CORE_TARGET sluice_api)
else()
  set(SLUICE_CORE_TARGET sluice)
endif()
file(WRITE ${CMAKE_BINARY_DIR}/sluice_shared.cpp "// libsluice.so: the objects of libsluice.a\n")
add_library(sluice_shared SHARED ${CMAKE_BINARY_DIR}/sluice_shared.cpp)
set_target_properties(sluice_shared PROPERTIES OUTPUT_NAME sluice VERSION ${PROJECT_VERSION}
                                               SOVERSION ${PROJECT_VERSION_MAJOR})
target_link_options(sluice_shared PRIVATE "LINKER:--whole-archive" ${SLUICE_LIBSLUICE_A}
                    "LINKER:--no-whole-archive" "LINKER:--no-undefined")
target_link_libraries(sluice_shared PRIVATE ${SLUICE_CORE_TARGET})
set_property(TARGET sluice_shared APPEND PROPERTY LINK_DEPENDS ${SLUICE_LIBSLUICE_A})
if(TARGET sluice_archive)
  add_dependencies(sluice_shared sluice_archive)
endif()

# What a static link of libsluice.a / libmpi.a needs besides it.
set(SLUICE_STATIC_LIBS "-lpthread -lrt -luring")  # liburing: the uring memory domain
find_library(SLUICE_INSTALL_HWLOC_LIB hwloc)
if(SLUICE_INSTALL_HWLOC_LIB)
  string(APPEND SLUICE_STATIC_LIBS " -lhwloc")
endif()
get_property(SLUICE_INSTALL_PMIX_LDFLAGS GLOBAL PROPERTY SLUICE_PMIX_LDFLAGS)
if(SLUICE_INSTALL_PMIX_LDFLAGS)
  string(APPEND SLUICE_STATIC_LIBS " ${SLUICE_INSTALL_PMIX_LDFLAGS}")
endif()

# ---- libraries and headers -----------------------------------------------------------------
install(TARGETS sluice_shared mpi mpifort LIBRARY DESTINATION lib)
install(TARGETS mpifort_static ARCHIVE DESTINATION lib)
install(FILES ${SLUICE_LIBSLUICE_A} ${CMAKE_ARCHIVE_OUTPUT_DIRECTORY}/libmpi.a DESTINATION lib)
install(FILES ${CMAKE_SOURCE_DIR}/include/mpi.h ${CMAKE_BINARY_DIR}/include/fortran/mpif.h
        DESTINATION include)
if(SLUICE_FORTRAN_COMPILER)
  install(FILES ${CMAKE_BINARY_DIR}/include/fortran/mpi.mod DESTINATION include)
endif()
# Public headers by content: a header may be a link into src/ (include/sluice/errc.hpp ->
# src/util/errc.hpp: Errc is util's), which would dangle in the prefix as a link.
file(GLOB SLUICE_PUBLIC_HEADERS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/include/sluice/*.hpp)
foreach(h IN LISTS SLUICE_PUBLIC_HEADERS)
  get_filename_component(name ${h} NAME)
  file(REAL_PATH ${h} real)
  install(FILES ${real} DESTINATION include/sluice RENAME ${name})
endforeach()

# ---- tools (sluicerun, sluice-bench and sluice-scale install themselves) ------------------
install(TARGETS sluice-info sluice-demo RUNTIME DESTINATION bin)

# ---- mpicc / mpicxx for the prefix ---------------------------------------------------------
# The same template as the build tree's wrappers (src/mpi/mpicc.in), with the include and
# library directories computed at run time from the wrapper's own location (P/bin/..).
set(SLUICE_MPI_INCDIR [=[$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)/include]=])
set(SLUICE_MPI_LIBDIR [=[$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)/lib]=])
set(SLUICE_STATIC_EXTRA_LIBS "${SLUICE_STATIC_LIBS}")
set(SLUICE_WRAPPER_SANITIZE "")
if(SLUICE_SANITIZE)
  set(SLUICE_WRAPPER_SANITIZE "-fsanitize=address,undefined ")
elseif(SLUICE_TSAN)
  set(SLUICE_WRAPPER_SANITIZE "-fsanitize=thread ")
endif()
set(SLUICE_WRAPPER_LANG C)
set(SLUICE_WRAPPER_COMPILER ${CMAKE_C_COMPILER})
set(SLUICE_WRAPPER_EXTRA_LIBS "${SLUICE_WRAPPER_SANITIZE}-lstdc++ -lpthread -lrt -lm")
configure_file(${CMAKE_SOURCE_DIR}/src/mpi/mpicc.in ${CMAKE_BINARY_DIR}/install/mpicc @ONLY)
set(SLUICE_WRAPPER_LANG C++)
set(SLUICE_WRAPPER_COMPILER ${CMAKE_CXX_COMPILER})
set(SLUICE_WRAPPER_EXTRA_LIBS "${SLUICE_WRAPPER_SANITIZE}-lpthread -lrt -lm")
configure_file(${CMAKE_SOURCE_DIR}/src/mpi/mpicc.in ${CMAKE_BINARY_DIR}/install/mpicxx @ONLY)
install(PROGRAMS ${CMAKE_BINARY_DIR}/install/mpicc ${CMAKE_BINARY_DIR}/install/mpicxx
        DESTINATION bin)
# mpifort (mpif90, mpif77): mpif.h and mpi.mod sit next to mpi.h in the prefix.
if(SLUICE_FORTRAN_COMPILER)
  set(SLUICE_WRAPPER_LANG Fortran)
  set(SLUICE_WRAPPER_COMPILER ${SLUICE_FORTRAN_COMPILER})
  set(SLUICE_WRAPPER_LANG_LIB mpifort)
  set(SLUICE_WRAPPER_LANG_FLAGS "${SLUICE_FORTRAN_WRAPPER_FLAGS}")
  set(SLUICE_WRAPPER_EXTRA_LIBS "${SLUICE_WRAPPER_SANITIZE}-lstdc++ -lpthread -lrt -lm")
  foreach(name mpifort mpif90 mpif77)
    configure_file(${CMAKE_SOURCE_DIR}/src/mpi/mpicc.in ${CMAKE_BINARY_DIR}/install/${name} @ONLY)
    install(PROGRAMS ${CMAKE_BINARY_DIR}/install/${name} DESTINATION bin)
  endforeach()
endif()

# ---- pkg-config and CMake package for the native API ---------------------------------------
configure_file(${CMAKE_CURRENT_LIST_DIR}/sluice.pc.in ${CMAKE_BINARY_DIR}/install/sluice.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/install/sluice.pc DESTINATION lib/pkgconfig)
configure_file(${CMAKE_CURRENT_LIST_DIR}/SluiceConfig.cmake.in
               ${CMAKE_BINARY_DIR}/install/SluiceConfig.cmake @ONLY)
include(CMakePackageConfigHelpers)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/SluiceConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/install/SluiceConfig.cmake
              ${CMAKE_BINARY_DIR}/install/SluiceConfigVersion.cmake
        DESTINATION lib/cmake/Sluice)
