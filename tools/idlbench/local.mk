# tools/idlbench/local.mk - idlbench: bench.defs, or a user's own interface (--defs), timed
# over every transport, beside each one's raw floor and the peers: ONC RPC, and the programs
# of tools/idlbench/peers/ (sd-bus, gRPC, Cap'n Proto) (docs/benchmarks.md). Installed; its tests are tests/bench/.

bin_PROGRAMS += tools/idlbench/idlbench

# The files in their layers (tests/lint/idlbench.sh checks the direction): base; floors and
# the verdict's rule; the interface; the cells; the run; the reports; the command line.
tools_idlbench_idlbench_SOURCES = \
	tools/idlbench/ib_base.h \
	tools/idlbench/idlbench_base.c \
	tools/idlbench/ib_floor.h \
	tools/idlbench/floor.c \
	tools/idlbench/floor_sock.c \
	tools/idlbench/floor_mq.c \
	tools/idlbench/floor_shm.c \
	tools/idlbench/floor_ool.c \
	tools/idlbench/floor_pipe.c \
	tools/idlbench/ib_verdict.h \
	tools/idlbench/idlbench_verdict.c \
	tools/idlbench/ib_iface.h \
	tools/idlbench/idlbench_rows.c \
	tools/idlbench/idlbench_defs.c \
	tools/idlbench/idlbench_gen.c \
	tools/idlbench/idlbench_build.c \
	tools/idlbench/ib_cell.h \
	tools/idlbench/ib_flight.h \
	tools/idlbench/ib_user.h \
	tools/idlbench/idlbench_cell.c \
	tools/idlbench/idlbench_idl.c \
	tools/idlbench/idlbench_flight.c \
	tools/idlbench/idlbench_inflight.c \
	tools/idlbench/idlbench_user.c \
	tools/idlbench/idlbench_uclient.c \
	tools/idlbench/idlbench_peers.c \
	tools/idlbench/idlbench_marshal.c \
	tools/idlbench/ib_run.h \
	tools/idlbench/idlbench_cols.c \
	tools/idlbench/idlbench_probe.c \
	tools/idlbench/idlbench_run.c \
	tools/idlbench/idlbench_stats.c \
	tools/idlbench/ib_report.h \
	tools/idlbench/idlbench_judge.c \
	tools/idlbench/idlbench_legend.c \
	tools/idlbench/idlbench_report.c \
	tools/idlbench/idlbench_summary.c \
	tools/idlbench/idlbench_json.c \
	tools/idlbench/idlbench_plot.c \
	tools/idlbench/idlbench_markdown.c \
	tools/idlbench/idlbench.c \
	examples/bench/bench_impl.c \
	examples/bench/bench_impl.h \
	examples/bench/bench_types.h
nodist_tools_idlbench_idlbench_SOURCES = tools/idlbench/idlbench_fns.h
# The user's interface goes through the compiler's library and idlcall's (libidlcall.a),
# and its generated code is compiled against the runtime's headers: the installed ones, or
# this source tree's for the binary of this build tree (idlbench_build.c).
tools_idlbench_idlbench_CPPFLAGS = $(bench_cppflags) -I$(top_srcdir)/tools/idlbench \
	-I$(top_builddir)/tools/idlbench -I$(top_srcdir)/tools/idlcall -I$(top_srcdir)/idlc \
	-I$(top_builddir)/idlc -DIDL_GNUPLOT='"$(GNUPLOT)"' -DIB_INCLUDEDIR='"$(includedir)"' \
	-DIB_SRC_INCLUDEDIR='"$(abs_top_srcdir)/include"' -DIB_BUILDDIR='"$(abs_top_builddir)"'
# The wraps: the notification ping-pong's answering notify, and the in-process marshaling
# row's idl_call and no-op biginout (idlbench_idl.c, idlbench_marshal.c explain them).
tools_idlbench_idlbench_LDFLAGS = -Wl,--wrap=S_bench_notify -Wl,--wrap=S_bench_biginout \
	-Wl,--wrap=idl_call
tools_idlbench_idlbench_LDADD = examples/bench/libbenchstubs.a tools/idlcall/libidlcall.a \
	idlc/libidlc.a runtime/libidlrt.la -lrt -lm

# The server routines of this build's bench.defs, for the interpreted server's resolver
# (idlbench_idl.c): taken by address in idlbench's own code, so that the --wrap'ed ones are
# the functions the compiled demux calls too.
tools/idlbench/idlbench_fns.h: examples/bench/benchServer.h
	@$(MKDIR_P) tools/idlbench
	$(AM_V_GEN){ echo '/* Generated from benchServer.h: IB_FN(each server routine). */'; \
	  sed -n 's/^kern_return_t \(S_bench_[A-Za-z0-9_]*\)(.*/IB_FN(\1)/p' \
	    examples/bench/benchServer.h; } > $@.tmp && mv -f $@.tmp $@
BUILT_SOURCES += tools/idlbench/idlbench_fns.h
CLEANFILES += tools/idlbench/idlbench_fns.h tools/idlbench/idlbench_fns.h.tmp

# The ONC RPC peer: rpcgen's code for tools/idlbench/oncrpc/bench.x (default style), built
# at build time. rpcgen runs in the source directory so that its outputs include "bench.h" by that
# name, and writes into the build directory, where they find each other.
EXTRA_DIST += tools/idlbench/oncrpc/bench.x
if HAVE_TIRPC
oncrpc_gen = \
	tools/idlbench/oncrpc/bench.h \
	tools/idlbench/oncrpc/bench_xdr.c \
	tools/idlbench/oncrpc/bench_clnt.c \
	tools/idlbench/oncrpc/bench_svc.c

tools/idlbench/oncrpc/bench.stamp: $(srcdir)/tools/idlbench/oncrpc/bench.x
	@$(MKDIR_P) tools/idlbench/oncrpc
	@rm -f tools/idlbench/oncrpc/bench.stamp.tmp
	@touch tools/idlbench/oncrpc/bench.stamp.tmp
	$(AM_V_GEN)cd $(srcdir)/tools/idlbench/oncrpc && \
		$(RPCGEN) -h -o $(abs_builddir)/tools/idlbench/oncrpc/bench.h bench.x && \
		$(RPCGEN) -c -o $(abs_builddir)/tools/idlbench/oncrpc/bench_xdr.c bench.x && \
		$(RPCGEN) -l -o $(abs_builddir)/tools/idlbench/oncrpc/bench_clnt.c bench.x && \
		$(RPCGEN) -m -o $(abs_builddir)/tools/idlbench/oncrpc/bench_svc.c bench.x
	@mv -f tools/idlbench/oncrpc/bench.stamp.tmp $@

$(oncrpc_gen): tools/idlbench/oncrpc/bench.stamp
	@test -f $@ || { rm -f tools/idlbench/oncrpc/bench.stamp; \
		$(MAKE) $(AM_MAKEFLAGS) tools/idlbench/oncrpc/bench.stamp; }

BUILT_SOURCES += $(oncrpc_gen)
CLEANFILES += $(oncrpc_gen) tools/idlbench/oncrpc/bench.stamp \
	tools/idlbench/oncrpc/bench.stamp.tmp

# rpcgen's code is not ours: it is built without our warning flags.
noinst_LIBRARIES += tools/idlbench/oncrpc/libbenchrpc.a
nodist_tools_idlbench_oncrpc_libbenchrpc_a_SOURCES = $(oncrpc_gen)
tools_idlbench_oncrpc_libbenchrpc_a_CPPFLAGS = -I$(top_builddir)/tools/idlbench/oncrpc \
	$(TIRPC_CFLAGS)
tools_idlbench_oncrpc_libbenchrpc_a_CFLAGS = $(PTHREAD_CFLAGS) -w

tools_idlbench_idlbench_SOURCES += tools/idlbench/idlbench_oncrpc.c
tools_idlbench_idlbench_CPPFLAGS += $(TIRPC_CFLAGS)
tools_idlbench_idlbench_LDADD += tools/idlbench/oncrpc/libbenchrpc.a $(TIRPC_LIBS)
else
tools_idlbench_idlbench_SOURCES += tools/idlbench/idlbench_nopeer.c
endif
EXTRA_DIST += tools/idlbench/idlbench_oncrpc.c tools/idlbench/idlbench_nopeer.c

# The README's main command: idlbench --quick on the example interface, its tables on stdout.
# IDLBENCH_FLAGS passes other options, e.g. make bench IDLBENCH_FLAGS='--placement same'.
IDLBENCH_FLAGS = --quick
bench: tools/idlbench/idlbench$(EXEEXT)
	tools/idlbench/idlbench$(EXEEXT) $(IDLBENCH_FLAGS)
.PHONY: bench

# tls:'s floor and the throwaway certificates: OpenSSL, as the transport.
if TRANSPORT_TLS
tools_idlbench_idlbench_SOURCES += tools/idlbench/floor_tls.c tools/idlbench/floor_tlscert.c
tools_idlbench_idlbench_CPPFLAGS += $(SSL_CFLAGS)
tools_idlbench_idlbench_LDADD += $(SSL_LIBS)
endif
EXTRA_DIST += tools/idlbench/floor_tls.c tools/idlbench/floor_tlscert.c

include tools/idlbench/peers/local.mk
