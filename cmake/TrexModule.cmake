# trex_module(NAME DEPS ...): a static library trex_NAME from every .cpp in src/NAME,
# so adding a file never needs a CMake edit (CONFIGURE_DEPENDS re-globs on build).
function(trex_module name)
  cmake_parse_arguments(ARG "" "" "DEPS;PRIVATE_DEPS" ${ARGN})
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  add_library(trex_${name} STATIC ${srcs})
  target_include_directories(trex_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(trex_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  set_target_properties(trex_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
