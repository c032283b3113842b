# tests/fuzz/local.mk - the fuzzers, built by clang with libFuzzer and the sanitizers: the
# compiler's front end (fuzz_defs), a server demux of the interface that uses every kind of
# argument (fuzz_demux, every.defs) and the client's decoding of its replies (fuzz_reply).
# make check runs a smoke run of each; check-long-fuzz and check-long-harden long ones.
EXTRA_DIST += tests/fuzz/defs.dict tests/fuzz/fuzz_defs.c \
	tests/fuzz/every.defs tests/fuzz/every_types.h tests/fuzz/demux.dict \
	tests/fuzz/reply.dict \
	tests/fuzz/fuzz_demux.c tests/fuzz/fuzz_demux_wire.c tests/fuzz/fuzz_demux_wire.h \
	tests/fuzz/fuzz_reply.c tests/fuzz/fuzz_reply_calls.c tests/fuzz/fuzz_demux_seeds.c
# The seed corpora: the front end's by kind (DIST_PATTERNS, Makefile.am), the demux's and
# the replies' by name (each a routine of every.defs, written by make regen-fuzz-seeds;
# they have no extension to match by).
DIST_PATTERNS += tests/fuzz/corpus/*.defs
EXTRA_DIST += tests/fuzz/demux-corpus/arrays tests/fuzz/demux-corpus/count \
	tests/fuzz/demux-corpus/deferred tests/fuzz/demux-corpus/fixed \
	tests/fuzz/demux-corpus/hello tests/fuzz/demux-corpus/inline_ports \
	tests/fuzz/demux-corpus/notify tests/fuzz/demux-corpus/notify_ool \
	tests/fuzz/demux-corpus/null tests/fuzz/demux-corpus/ool_in \
	tests/fuzz/demux-corpus/ool_inout tests/fuzz/demux-corpus/ool_out \
	tests/fuzz/demux-corpus/ool_page tests/fuzz/demux-corpus/port_array \
	tests/fuzz/demux-corpus/port_in tests/fuzz/demux-corpus/port_out \
	tests/fuzz/demux-corpus/records tests/fuzz/demux-corpus/scalars \
	tests/fuzz/demux-corpus/sleep_ms tests/fuzz/demux-corpus/stats \
	tests/fuzz/demux-corpus/strings tests/fuzz/demux-corpus/whoami
EXTRA_DIST += tests/fuzz/reply-corpus/arrays tests/fuzz/reply-corpus/count \
	tests/fuzz/reply-corpus/deferred tests/fuzz/reply-corpus/fixed \
	tests/fuzz/reply-corpus/inline_ports tests/fuzz/reply-corpus/null \
	tests/fuzz/reply-corpus/ool_in tests/fuzz/reply-corpus/ool_inout \
	tests/fuzz/reply-corpus/ool_out tests/fuzz/reply-corpus/ool_page \
	tests/fuzz/reply-corpus/port_array tests/fuzz/reply-corpus/port_in \
	tests/fuzz/reply-corpus/port_out tests/fuzz/reply-corpus/records \
	tests/fuzz/reply-corpus/scalars tests/fuzz/reply-corpus/sleep_ms \
	tests/fuzz/reply-corpus/stats tests/fuzz/reply-corpus/strings \
	tests/fuzz/reply-corpus/whoami
dist_check_SCRIPTS += tests/fuzz/smoke.sh tests/fuzz/no-fuzzer.sh tests/fuzz/fuzz-run.sh \
	tests/fuzz/fuzz-demux.sh tests/fuzz/fuzz-reply.sh tests/fuzz/idlc-fuzz.sh

# every.defs's stubs (mk/idlc-stubs.mk), for the fuzzers and the hardening suite
# (tests/harden/local.mk).
every_gen = \
	tests/fuzz/every.h \
	tests/fuzz/everyUser.c \
	tests/fuzz/everyServer.c \
	tests/fuzz/everyServer.h
tests/fuzz/every.stamp: $(srcdir)/tests/fuzz/every.defs $(idlc_built)
	$(AM_V_GEN)$(idlc_stubs)
$(every_gen): tests/fuzz/every.stamp
	$(idlc_stubs_again)
BUILT_SOURCES += $(every_gen)
CLEANFILES += $(every_gen) tests/fuzz/every.stamp

every_cppflags = $(test_cppflags) -I$(top_srcdir)/tests/fuzz -I$(top_builddir)/tests/fuzz \
	-I$(top_srcdir)/tests/harden

noinst_LIBRARIES += tests/fuzz/libeverystubs.a
nodist_tests_fuzz_libeverystubs_a_SOURCES = $(every_gen)
tests_fuzz_libeverystubs_a_CPPFLAGS = $(every_cppflags)

# The fuzzers build their code a second time, with clang: the compiler's library sources
# (the generated lexer and parser found through VPATH, in the build or the source tree), and
# libidlrt's sources with the stubs and the hardening suite's routines.
idlc_fuzz_lex = $(idlc_libidlc_a_SOURCES:.l=.c)
idlc_fuzz_sources = $(idlc_fuzz_lex:.y=.c) tests/fuzz/fuzz_defs.c
if HAVE_LIBFUZZER
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
FUZZ_RT_CFLAGS = $(FUZZ_CFLAGS) -pthread -I$(top_builddir) -I$(top_srcdir)/include \
	-I$(top_srcdir)/base -I$(top_srcdir)/runtime -I$(top_srcdir)/transports -I$(top_srcdir)/tests/fuzz \
	-I$(top_builddir)/tests/fuzz -I$(top_srcdir)/tests/harden

tests/fuzz/fuzz_defs$(EXEEXT): $(idlc_fuzz_sources) idlc/parser.h
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(CLANG) $(FUZZ_CFLAGS) -I$(top_builddir) -I$(top_srcdir)/include \
		-I$(top_srcdir)/base -I$(top_srcdir)/idlc -I$(top_builddir)/idlc -o $@ $(filter %.c,$^)

tests/fuzz/fuzz_demux$(EXEEXT): $(runtime_libidlrt_la_SOURCES) tests/fuzz/fuzz_demux.c \
		tests/fuzz/fuzz_demux_wire.c tests/harden/every_impl.c tests/fuzz/everyServer.c
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)srcs=; for f in $^; do case $$f in *.c) srcs="$$srcs $$f";; esac; done; \
		$(CLANG) $(FUZZ_RT_CFLAGS) -o $@ $$srcs $(runtime_libidlrt_la_LIBADD)

tests/fuzz/fuzz_reply$(EXEEXT): $(runtime_libidlrt_la_SOURCES) tests/fuzz/fuzz_reply.c \
		tests/fuzz/fuzz_reply_calls.c tests/fuzz/fuzz_demux_wire.c tests/fuzz/everyUser.c
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)srcs=; for f in $^; do case $$f in *.c) srcs="$$srcs $$f";; esac; done; \
		$(CLANG) $(FUZZ_RT_CFLAGS) -o $@ $$srcs $(runtime_libidlrt_la_LIBADD)

# idlc -fuzz's harness for the example interface, linked as a user links it: with the
# generated server stubs and the example's routines (idl-fuzz.sh runs it).
tests/fuzz/benchFuzz.c: $(srcdir)/examples/bench/bench.defs $(idlc_built)
	@$(MKDIR_P) tests/fuzz
	$(AM_V_GEN)(cd $(srcdir)/examples/bench && \
		IDLC_INCLUDE_DIR='$(abs_top_srcdir)/data/include' \
		'$(abs_top_builddir)/$(idlc_built)' -n -fuzz '$(abs_builddir)/$@' bench.defs)

tests/fuzz/bench_fuzz$(EXEEXT): $(runtime_libidlrt_la_SOURCES) tests/fuzz/benchFuzz.c \
		examples/bench/benchServer.c examples/bench/bench_impl.c
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)srcs=; for f in $^; do case $$f in *.c) srcs="$$srcs $$f";; esac; done; \
		$(CLANG) $(FUZZ_RT_CFLAGS) -I$(top_srcdir)/examples/bench \
		-I$(top_builddir)/examples/bench -o $@ $$srcs $(runtime_libidlrt_la_LIBADD)

# idlc -fuzz-client's harness for the same interface, linked with the client stubs.
tests/fuzz/benchFuzzClient.c: $(srcdir)/examples/bench/bench.defs $(idlc_built)
	@$(MKDIR_P) tests/fuzz
	$(AM_V_GEN)(cd $(srcdir)/examples/bench && \
		IDLC_INCLUDE_DIR='$(abs_top_srcdir)/data/include' \
		'$(abs_top_builddir)/$(idlc_built)' -n -fuzz-client '$(abs_builddir)/$@' bench.defs)

tests/fuzz/bench_fuzz_client$(EXEEXT): $(runtime_libidlrt_la_SOURCES) \
		tests/fuzz/benchFuzzClient.c examples/bench/benchUser.c
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)srcs=; for f in $^; do case $$f in *.c) srcs="$$srcs $$f";; esac; done; \
		$(CLANG) $(FUZZ_RT_CFLAGS) -I$(top_srcdir)/examples/bench \
		-I$(top_builddir)/examples/bench -o $@ $$srcs $(runtime_libidlrt_la_LIBADD)

# The same harness for every.defs, every kind of argument (ports, out-of-line data, records,
# inout and countinout arrays), linked with its client stubs.
tests/fuzz/everyFuzzClient.c: $(srcdir)/tests/fuzz/every.defs $(idlc_built)
	@$(MKDIR_P) tests/fuzz
	$(AM_V_GEN)(cd $(srcdir)/tests/fuzz && \
		IDLC_INCLUDE_DIR='$(abs_top_srcdir)/data/include' \
		'$(abs_top_builddir)/$(idlc_built)' -n -fuzz-client '$(abs_builddir)/$@' every.defs)

tests/fuzz/every_fuzz_client$(EXEEXT): $(runtime_libidlrt_la_SOURCES) \
		tests/fuzz/everyFuzzClient.c tests/fuzz/everyUser.c
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)srcs=; for f in $^; do case $$f in *.c) srcs="$$srcs $$f";; esac; done; \
		$(CLANG) $(FUZZ_RT_CFLAGS) -Wall -Wextra -Werror -Wno-unused-parameter -o $@ $$srcs \
		$(runtime_libidlrt_la_LIBADD)

fuzz_programs = tests/fuzz/fuzz_defs$(EXEEXT) tests/fuzz/fuzz_demux$(EXEEXT) \
	tests/fuzz/fuzz_reply$(EXEEXT) tests/fuzz/bench_fuzz$(EXEEXT) \
	tests/fuzz/bench_fuzz_client$(EXEEXT) tests/fuzz/every_fuzz_client$(EXEEXT)
check_SCRIPTS += $(fuzz_programs)
CLEANFILES += $(fuzz_programs)
TESTS += tests/fuzz/smoke.sh tests/fuzz/fuzz-demux.sh tests/fuzz/fuzz-reply.sh \
	tests/fuzz/idlc-fuzz.sh
CLEANFILES += tests/fuzz/benchFuzz.c tests/fuzz/benchFuzzClient.c tests/fuzz/everyFuzzClient.c

check-long-fuzz: tests/fuzz/fuzz_defs$(EXEEXT)
	IDL_TOP_SRCDIR='$(abs_top_srcdir)' IDL_TOP_BUILDDIR='$(abs_top_builddir)' \
		FUZZ_RUNS=$${FUZZ_RUNS:-0} FUZZ_TIME=$${FUZZ_TIME:-1800} \
		$(SHELL) $(srcdir)/tests/fuzz/smoke.sh
else
TESTS += tests/fuzz/no-fuzzer.sh

check-long-fuzz:
	$(SHELL) $(srcdir)/tests/fuzz/no-fuzzer.sh
endif
CHECK_LONG += check-long-fuzz
.PHONY: check-long-fuzz

# The seed corpora are made by this program from the stubs themselves: a request for every
# routine (demux) and the server's reply to it (reply). `make regen-fuzz-seeds` rewrites
# them under the source tree; review the change before committing it.
regen-fuzz-seeds: tests/fuzz/libeverystubs.a runtime/libidlrt.la
	$(AM_V_CCLD)$(LINK) $(every_cppflags) -I$(top_srcdir)/runtime \
		$(srcdir)/tests/fuzz/fuzz_demux_seeds.c $(srcdir)/tests/fuzz/fuzz_demux_wire.c \
		$(srcdir)/tests/fuzz/fuzz_reply_calls.c \
		$(srcdir)/tests/harden/every_impl.c tests/fuzz/libeverystubs.a \
		runtime/.libs/libidlrt.a $(LIBS) -o tests/fuzz/fuzz_demux_seeds
	tests/fuzz/fuzz_demux_seeds $(srcdir)/tests/fuzz/demux-corpus \
		$(srcdir)/tests/fuzz/reply-corpus
CLEANFILES += tests/fuzz/fuzz_demux_seeds
.PHONY: regen-fuzz-seeds
