# tests/harden/local.mk - hostile input, faults and limits (docs/security.md): the server of
# the interface that uses every kind of argument (tests/fuzz/every.defs, whose stubs
# tests/fuzz/local.mk makes), the hardening suite, and its long and valgrind runs for make
# check-long.

# The server the suite starts, linked as a user's server is (shared, a real binary).
check_PROGRAMS += tests/harden/every-server
tests_harden_every_server_SOURCES = \
	tests/harden/every_server.c \
	tests/harden/every_impl.c \
	tests/harden/every_impl.h
tests_harden_every_server_CPPFLAGS = $(every_cppflags)
tests_harden_every_server_LDADD = tests/fuzz/libeverystubs.a runtime/libidlrt.la
tests_harden_every_server_LDFLAGS = -no-install

if HAVE_CUNIT
# Limits, the authorisation hook, credentials, deferred replies, error injection, peer
# death on every transport.
check_PROGRAMS += tests/harden/harden
TESTS += tests/harden/harden
tests_harden_harden_SOURCES = \
	tests/harden/harden.h \
	tests/harden/util.c \
	$(tests_procdump_sources) $(tests_tls_certs_sources) \
	tests/harden/main.c \
	tests/harden/t_limits.c \
	tests/harden/t_auth.c \
	tests/harden/t_reply.c \
	tests/harden/t_death.c \
	tests/harden/t_scale.c \
	tests/harden/t_reconnect.c \
	tests/harden/every_impl.c \
	tests/harden/every_impl.h
tests_harden_harden_CPPFLAGS = $(every_cppflags) $(tests_procdump_cppflags) \
	-DIDL_TOP_SRCDIR_DEFAULT='"$(abs_top_srcdir)"'
tests_harden_harden_LDADD = tests/fuzz/libeverystubs.a runtime/libidlrt.la $(CUNIT_LIBS)
tests_harden_harden_LDFLAGS = -static
EXTRA_tests_harden_harden_DEPENDENCIES = tests/harden/every-server$(EXEEXT)
endif

# check-long: long fuzzing of the demux and reply fuzzers (FUZZ_TIME seconds each, 600
# unless set) and the hardening suite with its servers under valgrind memcheck.
dist_check_SCRIPTS += tests/harden/valgrind.sh
CHECK_LONG += check-long-harden
check-long-harden: all tests/harden/every-server$(EXEEXT)
	@$(MAKE) $(AM_MAKEFLAGS) tests/harden/harden$(EXEEXT) \
		tests/fuzz/fuzz_demux$(EXEEXT) tests/fuzz/fuzz_reply$(EXEEXT)
	IDL_TOP_SRCDIR='$(abs_top_srcdir)' IDL_TOP_BUILDDIR='$(abs_top_builddir)' \
		FUZZ_RUNS=$${FUZZ_RUNS:-0} FUZZ_TIME=$${FUZZ_TIME:-600} \
		$(SHELL) $(srcdir)/tests/fuzz/fuzz-run.sh demux
	IDL_TOP_SRCDIR='$(abs_top_srcdir)' IDL_TOP_BUILDDIR='$(abs_top_builddir)' \
		FUZZ_RUNS=$${FUZZ_RUNS:-0} FUZZ_TIME=$${FUZZ_TIME:-600} \
		$(SHELL) $(srcdir)/tests/fuzz/fuzz-run.sh reply
	IDL_TOP_SRCDIR='$(abs_top_srcdir)' IDL_TOP_BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/harden/valgrind.sh
	IDL_TOP_BUILDDIR='$(abs_top_builddir)' HD_SCALE_UNIX=10000 HD_SCALE_TCP=3000 \
		HD_SCALE_PER_ADDRESS=256 tests/harden/harden$(EXEEXT) scale
.PHONY: check-long-harden
