# transports/local.mk - the transports built into libidlrt (docs/transports.md): one folder
# each, whose local.mk adds its sources to the library and its address row to the
# conformance suite (tests/transport/local.mk, included before this file); configure's
# --disable-transport-NAME leaves one out. A transport includes the runtime's
# transport_kit.h, its own folder's headers and the socket helpers of transports/sock/.
runtime_libidlrt_la_CPPFLAGS += -I$(top_srcdir)/transports

include transports/sock/local.mk
include transports/unix/local.mk
include transports/tcp/local.mk
include transports/udp/local.mk
include transports/shm/local.mk
include transports/mqueue/local.mk
include transports/tls/local.mk
