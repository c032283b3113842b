# examples/bench/local.mk - the first example: bench.defs served by bench-server and called by
# bench-client, with stubs that the just-built idlc generates at build time.

# bench.defs is also idlbench's interface, installed for users' own measurements.
dist_pkgdata_DATA += examples/bench/bench.defs examples/bench/bench_types.h

# idlc writes the four files in one run. The stamp is the one target that runs it, so that
# make -j never starts two idlc runs; it is touched before idlc starts, so it is never newer
# than the files it stands for. Depending on idlc itself rebuilds the stubs whenever the
# compiler changes. idlc runs in the directory of bench.defs so that the generated banner
# names "bench.defs", not a path that depends on where the tree was built.
bench_gen = \
	examples/bench/bench.h \
	examples/bench/benchUser.c \
	examples/bench/benchServer.c \
	examples/bench/benchServer.h

examples/bench/bench.stamp: $(srcdir)/examples/bench/bench.defs idlc/idlc$(EXEEXT)
	@$(MKDIR_P) examples/bench
	@rm -f examples/bench/bench.stamp.tmp
	@touch examples/bench/bench.stamp.tmp
	$(AM_V_GEN)cd $(srcdir)/examples/bench && $(abs_top_builddir)/idlc/idlc$(EXEEXT) \
		-sheader $(abs_builddir)/examples/bench/benchServer.h \
		-header $(abs_builddir)/examples/bench/bench.h \
		-user $(abs_builddir)/examples/bench/benchUser.c \
		-server $(abs_builddir)/examples/bench/benchServer.c \
		bench.defs
	@mv -f examples/bench/bench.stamp.tmp $@

# If a generated file was removed by hand, run idlc again.
$(bench_gen): examples/bench/bench.stamp
	@test -f $@ || { rm -f examples/bench/bench.stamp; \
		$(MAKE) $(AM_MAKEFLAGS) examples/bench/bench.stamp; }

BUILT_SOURCES += $(bench_gen)
CLEANFILES += $(bench_gen) examples/bench/bench.stamp examples/bench/bench.stamp.tmp

# The generated stubs, once for every program that calls or serves bench.defs (bench-client,
# bench-server, the transport conformance suite): each takes only the objects it uses.
noinst_LIBRARIES += examples/bench/libbenchstubs.a
nodist_examples_bench_libbenchstubs_a_SOURCES = $(bench_gen)
examples_bench_libbenchstubs_a_CPPFLAGS = $(bench_cppflags)

bench_cppflags = $(AM_CPPFLAGS) -I$(top_srcdir)/examples/bench -I$(top_builddir)/examples/bench

# The examples link libidlrt the way a user's program does, shared; -no-install makes them
# real binaries rather than libtool wrapper scripts, so the tests can exec, stop and kill
# them by pid.
noinst_PROGRAMS += examples/bench/bench-server examples/bench/bench-client

examples_bench_bench_server_SOURCES = \
	examples/bench/server.c \
	examples/bench/bench_impl.c \
	examples/bench/bench_impl.h \
	examples/bench/bench_types.h
examples_bench_bench_server_CPPFLAGS = $(bench_cppflags)
examples_bench_bench_server_LDADD = examples/bench/libbenchstubs.a runtime/libidlrt.la
examples_bench_bench_server_LDFLAGS = -no-install

examples_bench_bench_client_SOURCES = \
	examples/bench/client.c \
	examples/bench/bench_impl.h \
	examples/bench/bench_types.h
examples_bench_bench_client_CPPFLAGS = $(bench_cppflags)
examples_bench_bench_client_LDADD = examples/bench/libbenchstubs.a runtime/libidlrt.la
examples_bench_bench_client_LDFLAGS = -no-install

EXTRA_DIST += examples/bench/run-example.sh

# The README's first command: both programs, in two processes, every routine timed.
# RUN_EXAMPLE_FLAGS passes options on, e.g. make run-example RUN_EXAMPLE_FLAGS='-n 10000'.
RUN_EXAMPLE_FLAGS =
run-example: examples/bench/bench-server$(EXEEXT) examples/bench/bench-client$(EXEEXT)
	BENCH_BINDIR=examples/bench $(SHELL) $(srcdir)/examples/bench/run-example.sh \
		$(RUN_EXAMPLE_FLAGS)
.PHONY: run-example
