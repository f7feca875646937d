# libfabric is dlopen'ed by src/net/ofi/ofi_dl.c on first use instead of linked (its
# Debian build's PSM constructors cost about 0.2 s at every process start). The build
# still needs its headers, and the soname and symbol versions the link editor would have
# bound each function to, read here from the library pkg-config found:
# RMPI_FI_SONAME and RMPI_FI_V_<NAME> (none found: ofi_dl.c takes the defaults).
function(rmpi_libfabric_dl out_defs)
  set(defs "")
  set(lib "")
  foreach(l IN LISTS LIBFABRIC_LINK_LIBRARIES)
    if(l MATCHES "fabric")
      set(lib "${l}")
    endif()
  endforeach()
  find_program(RMPI_OBJDUMP NAMES objdump)
  if(lib AND RMPI_OBJDUMP)
    execute_process(COMMAND ${RMPI_OBJDUMP} -p ${lib} OUTPUT_VARIABLE hdr ERROR_QUIET)
    if(hdr MATCHES "SONAME +([^ \n]+)")
      list(APPEND defs "RMPI_FI_SONAME=\"${CMAKE_MATCH_1}\"")
    endif()
    execute_process(COMMAND ${RMPI_OBJDUMP} -T ${lib} OUTPUT_VARIABLE syms ERROR_QUIET)
    set(all 1)
    foreach(f getinfo freeinfo dupinfo fabric strerror version)
      # the default version of a symbol is printed without parentheses
      if(syms MATCHES "[ \t](FABRIC_[0-9.]+)[ \t]+fi_${f}\n")
        string(TOUPPER ${f} F)
        list(APPEND defs "RMPI_FI_V_${F}=\"${CMAKE_MATCH_1}\"")
      else()
        set(all 0)
      endif()
    endforeach()
    if(NOT all) # all or none: ofi_dl.c's defaults are for none
      list(FILTER defs EXCLUDE REGEX "^RMPI_FI_V_")
    endif()
  endif()
  message(STATUS "libfabric loaded on first use: ${defs}")
  set(${out_defs} "${defs}" PARENT_SCOPE)
endfunction()
