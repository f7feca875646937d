# rmpi_optional_pkg(PREFIX module): pkg_check_modules(PREFIX QUIET IMPORTED_TARGET module)
# without its cache, plus a configure dependency on pkg-config's search directories: a .pc
# file that appears or goes changes its directory's time, and the next build re-runs
# configure. Used for libfabric, libpmix and hwloc.

# The directories pkg-config reads: PKG_CONFIG_PATH, then PKG_CONFIG_LIBDIR or its
# built-in path. One that does not exist yet stands for itself through its parent.
set(_rmpi_pc_dirs $ENV{PKG_CONFIG_PATH})
if(DEFINED ENV{PKG_CONFIG_LIBDIR})
  list(APPEND _rmpi_pc_dirs $ENV{PKG_CONFIG_LIBDIR})
else()
  execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --variable pc_path pkg-config
                  OUTPUT_VARIABLE _rmpi_pc_path OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  list(APPEND _rmpi_pc_dirs ${_rmpi_pc_path})
endif()
string(REPLACE ":" ";" _rmpi_pc_dirs "${_rmpi_pc_dirs}")
foreach(dir ${_rmpi_pc_dirs})
  get_filename_component(parent ${dir} DIRECTORY)
  if(IS_DIRECTORY ${dir})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${dir})
  elseif(IS_DIRECTORY ${parent})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${parent})
  endif()
endforeach()

macro(rmpi_optional_pkg prefix module)
  unset(__pkg_config_checked_${prefix} CACHE)
  pkg_check_modules(${prefix} QUIET IMPORTED_TARGET ${module})
endmacro()

# rmpi_optional_use(PREFIX module DEFINE found_msg missing_msg): when found, rmpi_obj and its
# users get DEFINE and the library; configure says which.
macro(rmpi_optional_use prefix module define found_msg missing_msg)
  if(${prefix}_FOUND)
    message(STATUS "${module} ${${prefix}_VERSION}: ${found_msg}")
    target_compile_definitions(rmpi_obj PUBLIC ${define})
    target_link_libraries(rmpi_obj PUBLIC PkgConfig::${prefix})
  else()
    message(STATUS "${module} not found (pkg-config ${module}): ${missing_msg}")
  endif()
endmacro()
