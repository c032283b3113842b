# tools/idlbench.mk - idlbench: bench.defs timed over every transport, beside each one's raw
# floor and the ONC RPC peer (docs/benchmarks.md). Installed; its tests run in make check.

bin_PROGRAMS += tools/idlbench

tools_idlbench_SOURCES = \
	tools/idlbench.h \
	tools/idlbench.c \
	tools/idlbench_cell.c \
	tools/idlbench_idl.c \
	tools/idlbench_marshal.c \
	tools/idlbench_report.c \
	tools/floor.c \
	tools/floor_sock.c \
	tools/floor_mq.c \
	tools/floor_shm.c \
	tools/floor_ool.c \
	examples/bench/bench_impl.c \
	examples/bench/bench_impl.h \
	examples/bench/bench_types.h
nodist_tools_idlbench_SOURCES = tools/idlbench_ool.h tools/idlbench_fns.h
tools_idlbench_CPPFLAGS = $(bench_cppflags) -I$(top_srcdir)/tools -I$(top_builddir)/tools \
	-DIDL_GNUPLOT='"$(GNUPLOT)"'
# The wraps: the notification ping-pong's answering notify, and the in-process marshaling
# row's idl_call and no-op biginout (idlbench_idl.c, idlbench_marshal.c explain them).
tools_idlbench_LDFLAGS = -Wl,--wrap=S_bench_notify -Wl,--wrap=S_bench_biginout \
	-Wl,--wrap=idl_call
tools_idlbench_LDADD = examples/bench/libbenchstubs.a runtime/libidlrt.la -lrt -lm

# Which out-of-line stubs this build of bench.defs has: their rows run when they exist.
tools/idlbench_ool.h: examples/bench/bench.h
	@$(MKDIR_P) tools
	$(AM_V_GEN){ echo '/* Generated from bench.h: the out-of-line stubs it declares. */'; \
	  if grep -q 'bench_ool64k(' examples/bench/bench.h; then \
	    echo '#define IB_HAVE_OOL64K 1'; fi; \
	  if grep -q 'bench_ool1m(' examples/bench/bench.h; then \
	    echo '#define IB_HAVE_OOL1M 1'; fi; } > $@.tmp && mv -f $@.tmp $@
BUILT_SOURCES += tools/idlbench_ool.h
CLEANFILES += tools/idlbench_ool.h tools/idlbench_ool.h.tmp

# The server routines of this build's bench.defs, for the interpreted server's resolver
# (idlbench_idl.c): taken by address in idlbench's own code, so that the --wrap'ed ones are
# the functions the compiled demux calls too.
tools/idlbench_fns.h: examples/bench/benchServer.h
	@$(MKDIR_P) tools
	$(AM_V_GEN){ echo '/* Generated from benchServer.h: IB_FN(each server routine). */'; \
	  sed -n 's/^kern_return_t \(S_bench_[A-Za-z0-9_]*\)(.*/IB_FN(\1)/p' \
	    examples/bench/benchServer.h; } > $@.tmp && mv -f $@.tmp $@
BUILT_SOURCES += tools/idlbench_fns.h
CLEANFILES += tools/idlbench_fns.h tools/idlbench_fns.h.tmp

# The ONC RPC peer: rpcgen's code for tools/oncrpc/bench.x (default style), built at build
# time. rpcgen runs in the source directory so that its outputs include "bench.h" by that
# name, and writes into the build directory, where they find each other.
EXTRA_DIST += tools/oncrpc/bench.x
if HAVE_TIRPC
oncrpc_gen = \
	tools/oncrpc/bench.h \
	tools/oncrpc/bench_xdr.c \
	tools/oncrpc/bench_clnt.c \
	tools/oncrpc/bench_svc.c

tools/oncrpc/bench.stamp: $(srcdir)/tools/oncrpc/bench.x
	@$(MKDIR_P) tools/oncrpc
	@rm -f tools/oncrpc/bench.stamp.tmp
	@touch tools/oncrpc/bench.stamp.tmp
	$(AM_V_GEN)cd $(srcdir)/tools/oncrpc && \
		$(RPCGEN) -h -o $(abs_builddir)/tools/oncrpc/bench.h bench.x && \
		$(RPCGEN) -c -o $(abs_builddir)/tools/oncrpc/bench_xdr.c bench.x && \
		$(RPCGEN) -l -o $(abs_builddir)/tools/oncrpc/bench_clnt.c bench.x && \
		$(RPCGEN) -m -o $(abs_builddir)/tools/oncrpc/bench_svc.c bench.x
	@mv -f tools/oncrpc/bench.stamp.tmp $@

$(oncrpc_gen): tools/oncrpc/bench.stamp
	@test -f $@ || { rm -f tools/oncrpc/bench.stamp; \
		$(MAKE) $(AM_MAKEFLAGS) tools/oncrpc/bench.stamp; }

BUILT_SOURCES += $(oncrpc_gen)
CLEANFILES += $(oncrpc_gen) tools/oncrpc/bench.stamp tools/oncrpc/bench.stamp.tmp

# rpcgen's code is not ours: it is built without our warning flags.
noinst_LIBRARIES += tools/oncrpc/libbenchrpc.a
nodist_tools_oncrpc_libbenchrpc_a_SOURCES = $(oncrpc_gen)
tools_oncrpc_libbenchrpc_a_CPPFLAGS = -I$(top_builddir)/tools/oncrpc $(TIRPC_CFLAGS)
tools_oncrpc_libbenchrpc_a_CFLAGS = $(PTHREAD_CFLAGS) -w

tools_idlbench_SOURCES += tools/idlbench_oncrpc.c
tools_idlbench_CPPFLAGS += $(TIRPC_CFLAGS)
tools_idlbench_LDADD += tools/oncrpc/libbenchrpc.a $(TIRPC_LIBS)
else
tools_idlbench_SOURCES += tools/idlbench_nopeer.c
endif
EXTRA_DIST += tools/idlbench_oncrpc.c tools/idlbench_nopeer.c

# Tests: a quick run whose JSON must have the documented shape (checked by a small C
# program: python is not guaranteed in CI), and `idlbench serve` with `--connect`.
check_PROGRAMS += tools/idlbench_jsoncheck
tools_idlbench_jsoncheck_SOURCES = tools/idlbench_jsoncheck.c
dist_check_SCRIPTS += tools/idlbench-quick.sh tools/idlbench-serve.sh
TESTS += tools/idlbench-quick.sh tools/idlbench-serve.sh

# The README's main command: idlbench --quick on the example interface, its tables on stdout.
# IDLBENCH_FLAGS passes other options, e.g. make bench IDLBENCH_FLAGS='--placement same'.
IDLBENCH_FLAGS = --quick
bench: tools/idlbench$(EXEEXT)
	tools/idlbench$(EXEEXT) $(IDLBENCH_FLAGS)
.PHONY: bench
