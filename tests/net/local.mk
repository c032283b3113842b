# tests/net/local.mk - the tests of the network transports: loopback and two network
# namespaces, loss and duplication (nftables and a seeded shim), killed servers, udp: behind
# a firewall on its own host that refuses sends, and a port set of 1,000 endpoints. docs/transports/udp.md and tcp.md say what each checks. They use
# both tcp: and udp:, so they are built when both are.
if TRANSPORT_TCP
if TRANSPORT_UDP

# counter.defs's stubs (mk/idlc-stubs.mk).
net_gen = \
	tests/net/counter.h \
	tests/net/counterUser.c \
	tests/net/counterServer.c \
	tests/net/counterServer.h
tests/net/counter.stamp: $(srcdir)/tests/net/counter.defs $(idlc_built)
	$(AM_V_GEN)$(idlc_stubs)
$(net_gen): tests/net/counter.stamp
	$(idlc_stubs_again)
BUILT_SOURCES += $(net_gen)
CLEANFILES += $(net_gen) tests/net/counter.stamp
EXTRA_DIST += tests/net/counter.defs

net_cppflags = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/net -I$(top_builddir)/tests/net

# Real programs (-no-install), so that the scripts can run, stop and kill them by pid, in
# and out of network namespaces.
check_PROGRAMS += tests/net/net-server tests/net/net-client tests/net/udpshim
tests_net_net_server_SOURCES = tests/net/net-server.c
nodist_tests_net_net_server_SOURCES = tests/net/counterServer.c tests/net/counterServer.h
tests_net_net_server_CPPFLAGS = $(net_cppflags)
tests_net_net_server_LDADD = runtime/libidlrt.la
tests_net_net_server_LDFLAGS = -no-install
tests_net_net_client_SOURCES = tests/net/net-client.c
nodist_tests_net_net_client_SOURCES = tests/net/counterUser.c tests/net/counter.h
tests_net_net_client_CPPFLAGS = $(net_cppflags)
tests_net_net_client_LDADD = runtime/libidlrt.la
tests_net_net_client_LDFLAGS = -no-install
tests_net_udpshim_SOURCES = tests/net/udpshim.c

net_tests = \
	tests/net/loopback.sh \
	tests/net/kill.sh \
	tests/net/lossy.sh \
	tests/net/netns.sh \
	tests/net/firewall.sh \
	tests/net/portset.sh \
	tests/net/cleanup.sh
dist_check_SCRIPTS += $(net_tests) tests/net/lib.sh
TESTS += $(net_tests)

net_long = yes
endif
endif

# The long loss and duplication run: 10,000 calls per case instead of 2,000, part of
# make check-long.
CHECK_LONG += check-long-net
check-long-net: all
	@if test "$(net_long)" = yes; then \
		$(MAKE) $(AM_MAKEFLAGS) check TESTS=tests/net/lossy.sh NET_LOSSY_CALLS=10000; \
	else \
		echo "check-long-net: needs both the tcp and udp transports"; \
	fi
.PHONY: check-long-net
