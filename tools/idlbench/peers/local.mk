# tools/idlbench/peers/local.mk - idlbench's peer programs: the routines of bench.defs over
# sd-bus (peer to peer), gRPC and Cap'n Proto RPC, each a program of its own that configure
# builds when it finds its packages (tools/idlbench/peers/peers.m4). They are installed in
# $(pkglibexecdir)/peers, where the installed idlbench finds them; IDLBENCH_PEERDIR in the
# environment points idlbench at the build tree's instead (docs/benchmarks.md, "Peers").
# peer.h states the command line they all take; peer-test.sh tests each against itself.

peerexecdir = $(pkglibexecdir)/peers
peerexec_PROGRAMS =

# Where idlbench looks for the peer programs when IDLBENCH_PEERDIR is not set.
tools_idlbench_idlbench_CPPFLAGS += -DIDLBENCH_PEERDIR='"$(peerexecdir)"'

# Our code builds with our warnings; the peers are never built with the sanitizers (they
# measure other libraries, and the sanitizer trees configure --disable-peers).
peer_cppflags = -I$(top_builddir) -I$(top_srcdir)/tools/idlbench/peers \
	-I$(top_srcdir)/examples/bench
peer_sources = tools/idlbench/peers/peer.h tools/idlbench/peers/peer.c

EXTRA_DIST += tools/idlbench/peers/peers.m4 tools/idlbench/peers/sdbus/bench.xml \
	tools/idlbench/peers/grpc/bench.proto tools/idlbench/peers/capnp/bench.capnp

# ---- sd-bus: C, no generated code (bench.xml documents the vtable) ----
if HAVE_SDBUS
peerexec_PROGRAMS += tools/idlbench/peers/sdbus-peer
tools_idlbench_peers_sdbus_peer_SOURCES = $(peer_sources) tools/idlbench/peers/sdbus/sdbus_peer.c
tools_idlbench_peers_sdbus_peer_CPPFLAGS = $(peer_cppflags) $(SDBUS_CFLAGS) \
	-DPEER_SDBUS_VERSION='"$(SDBUS_VERSION)"'
tools_idlbench_peers_sdbus_peer_CFLAGS = $(WARN_CFLAGS)
tools_idlbench_peers_sdbus_peer_LDFLAGS =
tools_idlbench_peers_sdbus_peer_LDADD = $(SDBUS_LIBS)
endif

# ---- gRPC: protoc's messages and grpc_cpp_plugin's service for grpc/bench.proto ----
# Generated in the build directory by one protoc run, under a stamp; protoc runs on the
# source file and writes beside the build's objects, so out-of-tree builds work.
if HAVE_GRPC
grpc_gen = \
	tools/idlbench/peers/grpc/bench.pb.h \
	tools/idlbench/peers/grpc/bench.pb.cc \
	tools/idlbench/peers/grpc/bench.grpc.pb.h \
	tools/idlbench/peers/grpc/bench.grpc.pb.cc

tools/idlbench/peers/grpc/bench.stamp: $(srcdir)/tools/idlbench/peers/grpc/bench.proto
	@$(MKDIR_P) tools/idlbench/peers/grpc
	@rm -f $@.tmp
	@touch $@.tmp
	$(AM_V_GEN)$(PROTOC) -I$(srcdir)/tools/idlbench/peers/grpc \
		--cpp_out=tools/idlbench/peers/grpc --grpc_out=tools/idlbench/peers/grpc \
		--plugin=protoc-gen-grpc=$(GRPC_CPP_PLUGIN) \
		$(srcdir)/tools/idlbench/peers/grpc/bench.proto
	@mv -f $@.tmp $@

$(grpc_gen): tools/idlbench/peers/grpc/bench.stamp
	@test -f $@ || { rm -f tools/idlbench/peers/grpc/bench.stamp; \
		$(MAKE) $(AM_MAKEFLAGS) tools/idlbench/peers/grpc/bench.stamp; }

BUILT_SOURCES += $(grpc_gen)
CLEANFILES += $(grpc_gen) tools/idlbench/peers/grpc/bench.stamp \
	tools/idlbench/peers/grpc/bench.stamp.tmp

# protoc's code is not ours: it is built without our warning flags.
noinst_LIBRARIES += tools/idlbench/peers/grpc/libpeergrpc.a
nodist_tools_idlbench_peers_grpc_libpeergrpc_a_SOURCES = $(grpc_gen)
tools_idlbench_peers_grpc_libpeergrpc_a_CPPFLAGS = -I$(top_builddir)/tools/idlbench/peers/grpc \
	$(GRPC_CFLAGS)
tools_idlbench_peers_grpc_libpeergrpc_a_CXXFLAGS = -std=c++17 -w

peerexec_PROGRAMS += tools/idlbench/peers/grpc-peer
tools_idlbench_peers_grpc_peer_SOURCES = $(peer_sources) tools/idlbench/peers/grpc/grpc_peer.cc
# -isystem: the generated headers are compiled with our warnings but are not ours either.
tools_idlbench_peers_grpc_peer_CPPFLAGS = $(peer_cppflags) \
	-isystem $(top_builddir)/tools/idlbench/peers/grpc $(GRPC_CFLAGS)
tools_idlbench_peers_grpc_peer_CFLAGS = $(WARN_CFLAGS)
tools_idlbench_peers_grpc_peer_CXXFLAGS = $(PEER_CXXFLAGS)
tools_idlbench_peers_grpc_peer_LDFLAGS =
tools_idlbench_peers_grpc_peer_LDADD = tools/idlbench/peers/grpc/libpeergrpc.a $(GRPC_LIBS)
endif

# ---- Cap'n Proto: capnp compile -oc++ of capnp/bench.capnp ----
# The schema is a source: its empty rule keeps make from deriving it from the generated
# bench.capnp.c++ (through bench.capnp.o and the built-in link rule), a loop. Outside the
# conditional: the objects' rules name bench.capnp.c++ in every build, so a build without
# the peer would otherwise fail to find that file when `make dist` wants the schema.
$(srcdir)/tools/idlbench/peers/capnp/bench.capnp: ;

if HAVE_CAPNP
capnp_gen = \
	tools/idlbench/peers/capnp/bench.capnp.h \
	tools/idlbench/peers/capnp/bench.capnp.c++

tools/idlbench/peers/capnp/bench.stamp: $(srcdir)/tools/idlbench/peers/capnp/bench.capnp
	@$(MKDIR_P) tools/idlbench/peers/capnp
	@rm -f $@.tmp
	@touch $@.tmp
	$(AM_V_GEN)$(CAPNP) compile -o$(CAPNPC_CXX):tools/idlbench/peers/capnp \
		--src-prefix=$(srcdir)/tools/idlbench/peers/capnp \
		$(srcdir)/tools/idlbench/peers/capnp/bench.capnp
	@mv -f $@.tmp $@

$(capnp_gen): tools/idlbench/peers/capnp/bench.stamp
	@test -f $@ || { rm -f tools/idlbench/peers/capnp/bench.stamp; \
		$(MAKE) $(AM_MAKEFLAGS) tools/idlbench/peers/capnp/bench.stamp; }

BUILT_SOURCES += $(capnp_gen)
CLEANFILES += $(capnp_gen) tools/idlbench/peers/capnp/bench.stamp \
	tools/idlbench/peers/capnp/bench.stamp.tmp

noinst_LIBRARIES += tools/idlbench/peers/capnp/libpeercapnp.a
nodist_tools_idlbench_peers_capnp_libpeercapnp_a_SOURCES = $(capnp_gen)
tools_idlbench_peers_capnp_libpeercapnp_a_CPPFLAGS = \
	-I$(top_builddir)/tools/idlbench/peers/capnp $(CAPNP_CFLAGS)
tools_idlbench_peers_capnp_libpeercapnp_a_CXXFLAGS = -std=c++17 -w

peerexec_PROGRAMS += tools/idlbench/peers/capnp-peer
tools_idlbench_peers_capnp_peer_SOURCES = $(peer_sources) tools/idlbench/peers/capnp/capnp_peer.cc
tools_idlbench_peers_capnp_peer_CPPFLAGS = $(peer_cppflags) \
	-isystem $(top_builddir)/tools/idlbench/peers/capnp $(CAPNP_CFLAGS)
tools_idlbench_peers_capnp_peer_CFLAGS = $(WARN_CFLAGS)
tools_idlbench_peers_capnp_peer_CXXFLAGS = $(PEER_CXXFLAGS)
tools_idlbench_peers_capnp_peer_LDFLAGS =
tools_idlbench_peers_capnp_peer_LDADD = tools/idlbench/peers/capnp/libpeercapnp.a $(CAPNP_LIBS)
endif

# ---- Tests: each peer's server and client, every row, wrong answers, hung and dead servers.
# Listed whether or not the peer is built: a peer configure did not find is a SKIP that says
# why, one it found and that is missing a failure.
EXTRA_DIST += tools/idlbench/peers/peer-test.sh
dist_check_SCRIPTS += \
	tools/idlbench/peers/test-sdbus.sh \
	tools/idlbench/peers/test-grpc.sh \
	tools/idlbench/peers/test-capnp.sh
TESTS += \
	tools/idlbench/peers/test-sdbus.sh \
	tools/idlbench/peers/test-grpc.sh \
	tools/idlbench/peers/test-capnp.sh
