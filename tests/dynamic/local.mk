# tests/dynamic/local.mk - dynamic invocation's tests: the interpreter against the compiled
# demux, idlcall, tracing, the libffi server in the conformance suite (docs/idlcall.md).

# The tests (docs/idlcall.md, "Tests"). The server stubs of the golden interfaces are
# generated here too, so that xdemux can serve each request with the compiled demux and
# with the dynamic one and compare the replies byte for byte.
dyn_golden = scalars arrays strings
dyn_gen = \
	tests/dynamic/gen/scalarsServer.c tests/dynamic/gen/scalars_S.h \
	tests/dynamic/gen/arraysServer.c tests/dynamic/gen/arrays_S.h \
	tests/dynamic/gen/stringsServer.c tests/dynamic/gen/strings_S.h \
	tests/dynamic/gen/xoolServer.c tests/dynamic/gen/xool_S.h

# xool.defs (descriptors and special arguments) is the tests' own, beside them.
tests/dynamic/gen.stamp: $(srcdir)/tests/golden/scalars.defs \
		$(srcdir)/tests/golden/arrays.defs $(srcdir)/tests/golden/strings.defs \
		$(srcdir)/tests/dynamic/xool.defs idlc/idlc$(EXEEXT)
	@$(MKDIR_P) tests/dynamic/gen
	@rm -f tests/dynamic/gen.stamp.tmp
	@touch tests/dynamic/gen.stamp.tmp
	$(AM_V_GEN)for n in $(dyn_golden); do \
		(cd $(srcdir)/tests/golden && $(abs_top_builddir)/idlc/idlc$(EXEEXT) -n \
			-server $(abs_builddir)/tests/dynamic/gen/$${n}Server.c \
			-sheader $(abs_builddir)/tests/dynamic/gen/$${n}_S.h $$n.defs) || exit 1; \
	done
	$(AM_V_at)cd $(srcdir)/tests/dynamic && $(abs_top_builddir)/idlc/idlc$(EXEEXT) -n \
		-I$(abs_top_srcdir)/data/include \
		-server $(abs_builddir)/tests/dynamic/gen/xoolServer.c \
		-sheader $(abs_builddir)/tests/dynamic/gen/xool_S.h xool.defs
	@mv -f tests/dynamic/gen.stamp.tmp $@

$(dyn_gen): tests/dynamic/gen.stamp
	@test -f $@ || { rm -f tests/dynamic/gen.stamp; \
		$(MAKE) $(AM_MAKEFLAGS) tests/dynamic/gen.stamp; }

BUILT_SOURCES += $(dyn_gen)
CLEANFILES += $(dyn_gen) tests/dynamic/gen.stamp tests/dynamic/gen.stamp.tmp

dyn_test_cppflags = $(AM_CPPFLAGS) -I$(top_srcdir)/idlc -I$(top_builddir)/idlc \
	-I$(top_srcdir)/tools/idlcall -I$(top_srcdir)/tests/golden -I$(top_builddir)/tests/dynamic/gen \
	-I$(top_srcdir)/tests/dynamic \
	-I$(top_srcdir)/examples/bench -I$(top_builddir)/examples/bench \
	-DIDL_TOP_SRCDIR='"$(abs_top_srcdir)"' -DIDLC_PKGINCLUDEDIR='"$(pkgdatadir)/include"'

# -export-dynamic: the dynamic server finds the routines with dlsym in the program itself.
check_PROGRAMS += tests/dynamic/xdemux
TESTS += tests/dynamic/xdemux
tests_dynamic_xdemux_SOURCES = \
	tests/dynamic/xdemux.c \
	tests/dynamic/xdemux_impl.c \
	tests/dynamic/xool_impl.c \
	tools/idlcall/idlcall_desc.c \
	tools/idlcall/idlcall_args.c \
	examples/bench/bench_impl.c
nodist_tests_dynamic_xdemux_SOURCES = \
	tests/dynamic/gen/scalarsServer.c \
	tests/dynamic/gen/arraysServer.c \
	tests/dynamic/gen/stringsServer.c \
	tests/dynamic/gen/xoolServer.c
tests_dynamic_xdemux_CPPFLAGS = $(dyn_test_cppflags)
tests_dynamic_xdemux_LDADD = examples/bench/libbenchstubs.a idlc/libidlc.a \
	runtime/libidlrt.la
tests_dynamic_xdemux_LDFLAGS = -static -export-dynamic

# dyn-server: bench.defs served by the dynamic server, linked with libidlrt shared as a
# user's program is (so the exported names are tested too).
check_PROGRAMS += tests/dynamic/dyn-server
tests_dynamic_dyn_server_SOURCES = \
	tests/dynamic/dyn_server.c \
	tools/idlcall/idlcall_desc.c \
	examples/bench/bench_impl.c
tests_dynamic_dyn_server_CPPFLAGS = $(dyn_test_cppflags)
tests_dynamic_dyn_server_LDADD = examples/bench/libbenchstubs.a idlc/libidlc.a \
	runtime/libidlrt.la
tests_dynamic_dyn_server_LDFLAGS = -no-install -export-dynamic

# dyn-oolt-server: oolt.defs (out-of-line data, ports, deferred replies) served by the
# dynamic server, for the conformance suite's oolt cases ($IDL_OOLT_SERVER).
check_PROGRAMS += tests/dynamic/dyn-oolt-server
tests_dynamic_dyn_oolt_server_SOURCES = \
	tests/dynamic/dyn_oolt_server.c \
	tools/idlcall/idlcall_desc.c
nodist_tests_dynamic_dyn_oolt_server_SOURCES = tests/ool/ooltServer.c tests/ool/ooltServer.h \
	tests/ool/ooltUser.c tests/ool/oolt.h
tests_dynamic_dyn_oolt_server_CPPFLAGS = $(dyn_test_cppflags) -I$(top_srcdir)/tests/ool \
	-I$(top_builddir)/tests/ool
tests_dynamic_dyn_oolt_server_LDADD = idlc/libidlc.a runtime/libidlrt.la
tests_dynamic_dyn_oolt_server_LDFLAGS = -no-install -export-dynamic

# Shared libraries of server routines for idlcall --serve, built as a user builds one (a
# libtool module, shared whatever the build's default): bench's own bench_impl.c, written
# against the generated benchServer.h, and calc.defs's calc_lib.c, the example of
# docs/idlcall.md. -rpath makes libtool build them shared though they are never installed.
check_LTLIBRARIES = tests/dynamic/benchimpl.la tests/dynamic/calc.la
dyn_module_ldflags = -module -shared -avoid-version -rpath /nowhere
tests_dynamic_benchimpl_la_SOURCES = examples/bench/bench_impl.c examples/bench/bench_impl.h
tests_dynamic_benchimpl_la_CPPFLAGS = $(bench_cppflags)
tests_dynamic_benchimpl_la_LDFLAGS = $(dyn_module_ldflags)
tests_dynamic_benchimpl_la_LIBADD = runtime/libidlrt.la
tests_dynamic_calc_la_SOURCES = tests/dynamic/calc_lib.c
tests_dynamic_calc_la_LDFLAGS = $(dyn_module_ldflags)

# idlcall against the compiled bench-server and against dyn-server, bench-client against
# dyn-server, tracing; then the transport conformance suite with dyn-server in place of
# bench-server.
dist_check_SCRIPTS += tests/dynamic/idlcall.sh tests/dynamic/conformance.sh
TESTS += tests/dynamic/idlcall.sh
if HAVE_CUNIT
TESTS += tests/dynamic/conformance.sh
endif

EXTRA_DIST += tests/dynamic/xool.defs tests/dynamic/xool_types.h tests/dynamic/calc.defs
