# tests/ool/local.mk - oolt.defs, the test interface of the dialect at run time: its stubs,
# generated at build time as the example's are, and oolt-server, which the conformance
# suite (tests/transport/t_oolt.c) starts for each transport.
oolt_gen = \
	tests/ool/oolt.h \
	tests/ool/ooltUser.c \
	tests/ool/ooltServer.c \
	tests/ool/ooltServer.h
tests/ool/oolt.stamp: $(srcdir)/tests/ool/oolt.defs $(idlc_built)
	$(AM_V_GEN)$(idlc_stubs)
$(oolt_gen): tests/ool/oolt.stamp
	$(idlc_stubs_again)
BUILT_SOURCES += $(oolt_gen)
CLEANFILES += $(oolt_gen) tests/ool/oolt.stamp
EXTRA_DIST += tests/ool/oolt.defs

# The client stubs for the conformance suite, and the server.
noinst_LIBRARIES += tests/ool/libooltstubs.a
nodist_tests_ool_libooltstubs_a_SOURCES = tests/ool/oolt.h tests/ool/ooltUser.c
tests_ool_libooltstubs_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/tests/ool \
	-I$(top_srcdir)/tests/ool

check_PROGRAMS += tests/ool/oolt-server
tests_ool_oolt_server_SOURCES = tests/ool/server.c tests/ool/oolt_util.h
nodist_tests_ool_oolt_server_SOURCES = tests/ool/ooltServer.c tests/ool/ooltServer.h \
	tests/ool/ooltUser.c tests/ool/oolt.h
tests_ool_oolt_server_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/ool \
	-I$(top_builddir)/tests/ool
tests_ool_oolt_server_LDADD = runtime/libidlrt.la
tests_ool_oolt_server_LDFLAGS = -static

# A read of a freed out-of-line block is reported, the cache of blocks on and off: under
# AddressSanitizer in a sanitizer build, under valgrind's memcheck otherwise (uaf.sh says
# which, or why it skips).
check_PROGRAMS += tests/ool/ool-uaf
tests_ool_ool_uaf_SOURCES = tests/ool/uaf.c
tests_ool_ool_uaf_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/runtime
tests_ool_ool_uaf_LDADD = runtime/libidlrt.la
tests_ool_ool_uaf_LDFLAGS = -static
dist_check_SCRIPTS += tests/ool/uaf.sh
TESTS += tests/ool/uaf.sh
