# tests/ool/local.mk - oolt.defs, the test interface of the dialect at run time: its stubs,
# generated at build time as the example's are, and oolt-server, which the conformance
# suite (tests/transport/t_oolt.c) starts for each transport.

oolt_gen = \
	tests/ool/oolt.h \
	tests/ool/ooltUser.c \
	tests/ool/ooltServer.c \
	tests/ool/ooltServer.h

tests/ool/oolt.stamp: $(srcdir)/tests/ool/oolt.defs idlc/idlc$(EXEEXT)
	@$(MKDIR_P) tests/ool
	@rm -f tests/ool/oolt.stamp.tmp
	@touch tests/ool/oolt.stamp.tmp
	$(AM_V_GEN)cd $(srcdir)/tests/ool && $(abs_top_builddir)/idlc/idlc$(EXEEXT) \
		-I$(abs_top_srcdir)/data/include \
		-sheader $(abs_builddir)/tests/ool/ooltServer.h \
		-header $(abs_builddir)/tests/ool/oolt.h \
		-user $(abs_builddir)/tests/ool/ooltUser.c \
		-server $(abs_builddir)/tests/ool/ooltServer.c \
		oolt.defs
	@mv -f tests/ool/oolt.stamp.tmp $@

$(oolt_gen): tests/ool/oolt.stamp
	@test -f $@ || { rm -f tests/ool/oolt.stamp; \
		$(MAKE) $(AM_MAKEFLAGS) tests/ool/oolt.stamp; }

BUILT_SOURCES += $(oolt_gen)
CLEANFILES += $(oolt_gen) tests/ool/oolt.stamp tests/ool/oolt.stamp.tmp
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

# The conformance suite's cases of out-of-line data (bench.defs's ool64k and ool1m) and of
# oolt.defs, which reach oolt-server by $IDL_TOP_BUILDDIR.
tests_transport_conformance_SOURCES += tests/transport/t_ool.c tests/transport/t_oolt.c
if HAVE_CUNIT
tests_transport_conformance_CPPFLAGS += -I$(top_srcdir)/tests/ool
tests_transport_conformance_LDADD += tests/ool/libooltstubs.a runtime/libidlrt.la
EXTRA_tests_transport_conformance_DEPENDENCIES += tests/ool/oolt-server$(EXEEXT)
endif
