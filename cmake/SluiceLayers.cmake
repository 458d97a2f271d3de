# One static library per layer of src/ (docs/DESIGN.md: util < mem < drivers < proto <
# core < coll < boot < api < mpi; tools on top), each linking only layers below it.
#
# Headers are included as "<layer>/file.hpp". A layer's include root is a directory of its
# own in the build tree holding one link, <layer> -> src/<layer>; the root is PUBLIC, so a
# layer sees its own headers and those of the layers it links, and an include of a layer
# above it does not compile. tools/check-layers.sh checks the same order on the sources
# (relative includes, public headers, tools), as a test.

set(SLUICE_LAYER_ROOTS ${CMAKE_BINARY_DIR}/layer-include)

# sluice_layer(<name> [DEPENDS <layer>...] [SOURCES <file>...] [PUBLIC_HEADERS])
#   Defines sluice_<name> for src/<name>/. With no SOURCES (yet) it is an INTERFACE library
#   (headers and links only); sub-folders may add sources with target_sources().
#   PUBLIC_HEADERS: the layer implements include/sluice/ (core and above).
function(sluice_layer name)
  cmake_parse_arguments(L "PUBLIC_HEADERS" "" "DEPENDS;SOURCES" ${ARGN})
  set(root ${SLUICE_LAYER_ROOTS}/${name})
  file(MAKE_DIRECTORY ${root})
  file(CREATE_LINK ${CMAKE_SOURCE_DIR}/src/${name} ${root}/${name} SYMBOLIC)
  set(target sluice_${name})
  if(L_SOURCES)
    add_library(${target} STATIC ${L_SOURCES})
    set(scope PUBLIC)
    set_property(GLOBAL APPEND PROPERTY SLUICE_LAYER_ARCHIVES ${target})
  else()
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
  endif()
  target_include_directories(${target} ${scope} ${root})
  if(L_PUBLIC_HEADERS)
    target_include_directories(${target} ${scope} ${CMAKE_SOURCE_DIR}/include)
  endif()
  foreach(dep IN LISTS L_DEPENDS)
    target_link_libraries(${target} ${scope} sluice_${dep})
  endforeach()
endfunction()

# sluice_merge_archives(<output file> <target>...): one archive holding every object of the
# given static libraries (an `ar -M` script), so one file suffices to link against.
function(sluice_merge_archives output)
  set(script "CREATE ${output}\\n")
  set(files)
  foreach(t IN LISTS ARGN)
    string(APPEND script "ADDLIB $<TARGET_FILE:${t}>\\n")
  endforeach()
  string(APPEND script "SAVE\\nEND\\n")
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -E rm -f ${output}
    COMMAND printf "${script}" | ${CMAKE_AR} -M
    DEPENDS ${ARGN}
    COMMENT "Merging ${output}"
    VERBATIM)
endfunction()
