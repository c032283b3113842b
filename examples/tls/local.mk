# examples/tls/local.mk - the tls: example: tls-server serves whoami.defs and authorises its
# routines by the client's certificate, tls-client calls it and says who each side is
# (docs/transports/tls.md). Built with the tls: transport; tests/net/tls-netns.sh runs them
# between two network namespaces.
if TRANSPORT_TLS
whoami_gen = \
	examples/tls/whoami.h \
	examples/tls/whoamiUser.c \
	examples/tls/whoamiServer.c \
	examples/tls/whoamiServer.h
examples/tls/whoami.stamp: $(srcdir)/examples/tls/whoami.defs $(idlc_built)
	$(AM_V_GEN)$(idlc_stubs)
$(whoami_gen): examples/tls/whoami.stamp
	$(idlc_stubs_again)
BUILT_SOURCES += $(whoami_gen)
CLEANFILES += $(whoami_gen) examples/tls/whoami.stamp
EXTRA_DIST += examples/tls/whoami.defs

tls_example_cppflags = $(AM_CPPFLAGS) -I$(top_srcdir)/examples/tls -I$(top_builddir)/examples/tls
noinst_PROGRAMS += examples/tls/tls-server examples/tls/tls-client
examples_tls_tls_server_SOURCES = examples/tls/tls_server.c examples/tls/whoami_types.h \
	examples/tls/tls_opts.c examples/tls/tls_opts.h
nodist_examples_tls_tls_server_SOURCES = examples/tls/whoamiServer.c examples/tls/whoamiServer.h
examples_tls_tls_server_CPPFLAGS = $(tls_example_cppflags)
examples_tls_tls_server_LDADD = runtime/libidlrt.la
examples_tls_tls_server_LDFLAGS = -no-install
examples_tls_tls_client_SOURCES = examples/tls/tls_client.c examples/tls/whoami_types.h \
	examples/tls/tls_opts.c examples/tls/tls_opts.h
nodist_examples_tls_tls_client_SOURCES = examples/tls/whoamiUser.c examples/tls/whoami.h
examples_tls_tls_client_CPPFLAGS = $(tls_example_cppflags)
examples_tls_tls_client_LDADD = runtime/libidlrt.la
examples_tls_tls_client_LDFLAGS = -no-install
endif
