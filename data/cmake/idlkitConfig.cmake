# idlkitConfig.cmake - idlkit 0.1.0 for CMake projects: find_package(idlkit) gives
#
#   idlkit::idlrt         the runtime library (shared), with its include directory
#   idlkit::idlrt_static  the same, static, when it was installed
#   idlkit::idlc          the stub compiler, as an imported executable
#   idl_generate(TARGET t DEFS a.defs... [USER] [SERVER] [OUTPUT_DIR d]
#                [IMPORT_DIRS dir...] [OPTIONS flag...])
#                         generates stubs at build time and adds them to target t
#
# idl_generate() writes, for each a.defs, into OUTPUT_DIR (default: the current binary
# directory): with USER, a.h and aUser.c (the client side); with SERVER, aServer.c and
# aServer.h (the server side); with neither, all four. It adds the files to t's sources and
# OUTPUT_DIR and the directory of a.defs to t's include directories; t still links the
# runtime itself (target_link_libraries(t idlkit::idlrt)). idlc writes a dependency file, so
# editing a file that a.defs #includes regenerates the stubs. IMPORT_DIRS are passed as -I,
# OPTIONS as they are (-D NAME, -q, ...). Files are named after the .defs file, symbols after
# its `subsystem` statement: name the file after its subsystem to keep MIG's names.
#
# Cross builds: set IDLC_EXECUTABLE (a cache variable, or the IDLC environment variable at
# the first configure) to a build-machine idlc; idlkit::idlc is the host's.
#
# The paths below are where `make install` put idlkit. When this file is found somewhere
# else that ends with the same library directory - a staged install (DESTDIR) or a sysroot -
# every path moves with it.

if(CMAKE_VERSION VERSION_LESS 3.14)
	message(FATAL_ERROR "idlkit needs CMake 3.14 or later")
endif()

set(_idlkit_libdir "/usr/local/lib")
set(_idlkit_bindir "/usr/local/bin")
set(_idlkit_includedir "/usr/local/include")
set(_idlkit_pkgdatadir "/usr/local/share/idlkit")
set(_idlkit_root "")
get_filename_component(_idlkit_here "${CMAKE_CURRENT_LIST_DIR}" REALPATH)
get_filename_component(_idlkit_home "${_idlkit_libdir}/cmake/idlkit" REALPATH)
if(NOT _idlkit_here STREQUAL _idlkit_home)
	string(LENGTH "${CMAKE_CURRENT_LIST_DIR}" _idlkit_n)
	string(LENGTH "${_idlkit_libdir}/cmake/idlkit" _idlkit_m)
	if(_idlkit_n GREATER _idlkit_m)
		math(EXPR _idlkit_cut "${_idlkit_n} - ${_idlkit_m}")
		string(SUBSTRING "${CMAKE_CURRENT_LIST_DIR}" ${_idlkit_cut} -1 _idlkit_tail)
		if(_idlkit_tail STREQUAL "${_idlkit_libdir}/cmake/idlkit")
			string(SUBSTRING "${CMAKE_CURRENT_LIST_DIR}" 0 ${_idlkit_cut} _idlkit_root)
		endif()
	endif()
endif()
foreach(_idlkit_v libdir bindir includedir pkgdatadir)
	set(_idlkit_${_idlkit_v} "${_idlkit_root}${_idlkit_${_idlkit_v}}")
endforeach()

set(idlkit_VERSION "0.1.0")
set(idlkit_INCLUDE_DIRS "${_idlkit_includedir}")
set(idlkit_DEFS_DIR "${_idlkit_pkgdatadir}/include")
set(idlkit_IDLC_MK "${_idlkit_pkgdatadir}/idlc.mk")

# The static library brings the runtime's own dependencies along; the shared one records
# them itself. A build configured --disable-shared installs only the static one, which then
# stands for idlkit::idlrt too.
macro(_idlkit_static name)
	find_package(Threads REQUIRED)
	add_library(${name} STATIC IMPORTED)
	set_target_properties(${name} PROPERTIES
		IMPORTED_LOCATION "${_idlkit_libdir}/libidlrt.a"
		IMPORTED_LINK_INTERFACE_LANGUAGES "C"
		INTERFACE_INCLUDE_DIRECTORIES "${_idlkit_includedir}"
		INTERFACE_LINK_LIBRARIES "Threads::Threads;-lffi")
endmacro()
set(_idlkit_so "${_idlkit_libdir}/libidlrt.so.1")
if(NOT TARGET idlkit::idlrt)
	if(EXISTS "${_idlkit_so}" OR NOT EXISTS "${_idlkit_libdir}/libidlrt.a")
		add_library(idlkit::idlrt SHARED IMPORTED)
		set_target_properties(idlkit::idlrt PROPERTIES
			IMPORTED_LOCATION "${_idlkit_so}"
			IMPORTED_SONAME "libidlrt.so.1"
			INTERFACE_INCLUDE_DIRECTORIES "${_idlkit_includedir}")
	else()
		_idlkit_static(idlkit::idlrt)
	endif()
endif()
if(NOT TARGET idlkit::idlrt_static AND EXISTS "${_idlkit_libdir}/libidlrt.a")
	_idlkit_static(idlkit::idlrt_static)
endif()
if(NOT TARGET idlkit::idlc)
	add_executable(idlkit::idlc IMPORTED)
	set_target_properties(idlkit::idlc PROPERTIES
		IMPORTED_LOCATION "${_idlkit_bindir}/idlc")
endif()

if(DEFINED ENV{IDLC} AND NOT "$ENV{IDLC}" STREQUAL "")
	set(_idlkit_idlc_default "$ENV{IDLC}")
else()
	set(_idlkit_idlc_default "${_idlkit_bindir}/idlc")
endif()
set(IDLC_EXECUTABLE "${_idlkit_idlc_default}" CACHE FILEPATH
	"the idlc that idl_generate() runs (a build-machine idlc for cross builds)")

# The generator writes one command per (.defs, output directory, side): a target that asks
# for the client side and another that asks for the server side of one interface get a
# command each, and a second target asking for the same files reuses the first command
# through a custom target, so two builds of one file never run in parallel.
function(idl_generate)
	cmake_parse_arguments(PARSE_ARGV 0 _idl "USER;SERVER" "TARGET;OUTPUT_DIR"
		"DEFS;IMPORT_DIRS;OPTIONS")
	if(NOT _idl_TARGET OR NOT TARGET "${_idl_TARGET}")
		message(FATAL_ERROR "idl_generate: TARGET must name an existing target")
	endif()
	if(NOT _idl_DEFS)
		message(FATAL_ERROR "idl_generate: DEFS names no .defs file")
	endif()
	if(_idl_UNPARSED_ARGUMENTS)
		message(FATAL_ERROR "idl_generate: unknown arguments: ${_idl_UNPARSED_ARGUMENTS}")
	endif()
	set(_sides "")
	if(_idl_USER)
		list(APPEND _sides user)
	endif()
	if(_idl_SERVER)
		list(APPEND _sides server)
	endif()
	if(NOT _sides)
		set(_sides user server)
	endif()
	if(NOT _idl_OUTPUT_DIR)
		set(_idl_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}")
	endif()
	get_filename_component(_out "${_idl_OUTPUT_DIR}" ABSOLUTE
		BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
	file(MAKE_DIRECTORY "${_out}")
	set(_flags "")
	foreach(_dir IN LISTS _idl_IMPORT_DIRS)
		get_filename_component(_dir "${_dir}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
		list(APPEND _flags "-I${_dir}")
	endforeach()
	list(APPEND _flags ${_idl_OPTIONS})
	# Dependency files need CMake 3.20 with Makefile generators (DEPFILE), and an idlc that
	# writes them (a build-machine idlc older than the host's may not); without them the
	# stubs are still regenerated when the .defs itself changes.
	set(_use_depfile TRUE)
	if(CMAKE_VERSION VERSION_LESS 3.20 AND NOT CMAKE_GENERATOR MATCHES "Ninja")
		set(_use_depfile FALSE)
	endif()
	if(NOT "${_IDLKIT_DEPFILE_PROBED}" STREQUAL "${IDLC_EXECUTABLE}")
		execute_process(COMMAND "${IDLC_EXECUTABLE}" --help
			OUTPUT_VARIABLE _help ERROR_QUIET RESULT_VARIABLE _rc)
		set(_has_md FALSE)
		if(_rc EQUAL 0 AND _help MATCHES "-MD")
			set(_has_md TRUE)
		endif()
		set(_IDLKIT_DEPFILE_PROBED "${IDLC_EXECUTABLE}" CACHE INTERNAL "")
		set(_IDLKIT_IDLC_HAS_MD "${_has_md}" CACHE INTERNAL "")
	endif()
	if(NOT _IDLKIT_IDLC_HAS_MD)
		set(_use_depfile FALSE)
	endif()
	if(POLICY CMP0116)
		cmake_policy(PUSH)
		cmake_policy(SET CMP0116 NEW)
	endif()
	foreach(_defs IN LISTS _idl_DEFS)
		get_filename_component(_defs "${_defs}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
		get_filename_component(_stem "${_defs}" NAME_WLE)
		get_filename_component(_defsdir "${_defs}" DIRECTORY)
		foreach(_side IN LISTS _sides)
			if(_side STREQUAL "user")
				set(_outs "${_out}/${_stem}.h" "${_out}/${_stem}User.c")
				set(_args -header "${_out}/${_stem}.h" -user "${_out}/${_stem}User.c")
			else()
				set(_outs "${_out}/${_stem}Server.c" "${_out}/${_stem}Server.h")
				set(_args -server "${_out}/${_stem}Server.c"
					-sheader "${_out}/${_stem}Server.h")
			endif()
			string(MD5 _key "${_out}/${_stem}/${_side}")
			string(SUBSTRING "${_key}" 0 12 _key)
			set(_gen "idlkit_${_stem}_${_side}_${_key}")
			if(NOT TARGET "${_gen}")
				set(_dep "${_out}/${_stem}.${_side}.defs.d")
				set(_depargs "")
				set(_depfile "")
				if(_use_depfile)
					set(_depargs -MD -MF "${_dep}" -MP)
					set(_depfile DEPFILE "${_dep}")
				endif()
				add_custom_command(OUTPUT ${_outs}
					COMMAND "${IDLC_EXECUTABLE}" ${_flags} ${_depargs} -n ${_args}
						"${_defs}"
					DEPENDS "${_defs}" "${IDLC_EXECUTABLE}"
					${_depfile}
					WORKING_DIRECTORY "${_out}"
					COMMENT "idlc: ${_side} stubs of ${_stem}.defs"
					VERBATIM)
				add_custom_target("${_gen}" DEPENDS ${_outs})
			endif()
			add_dependencies("${_idl_TARGET}" "${_gen}")
			target_sources("${_idl_TARGET}" PRIVATE ${_outs})
			set_source_files_properties(${_outs} PROPERTIES GENERATED TRUE)
		endforeach()
		target_include_directories("${_idl_TARGET}" PUBLIC "${_out}" "${_defsdir}")
	endforeach()
	if(POLICY CMP0116)
		cmake_policy(POP)
	endif()
endfunction()

unset(_idlkit_so)
unset(_idlkit_here)
unset(_idlkit_home)
unset(_idlkit_n)
unset(_idlkit_m)
unset(_idlkit_cut)
unset(_idlkit_tail)
unset(_idlkit_v)
