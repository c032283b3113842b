# transports/sock/local.mk - the socket code several transports share: UNIX socket files
# (unix:, shm:'s rendezvous), the checks of a socket a service manager passed (every
# transport that adopts one), the socket deadline cache (unix:, tcp:, udp:), reading ahead
# (unix:, udp:), the fast paths' system calls with the kernel's result (tcp:, port:), the
# HOST:PORT addresses of tcp:, udp: and tls:, and tcp:'s length-framed stream (stream*.c), which
# tls: carries too. Small, so built whenever one of them is.
runtime_libidlrt_la_SOURCES += \
	transports/sock/sockfile.h \
	transports/sock/sockfile.c \
	transports/sock/sock_adopt.h \
	transports/sock/sock_adopt.c \
	transports/sock/sock_timeo.h \
	transports/sock/sock_timeo.c \
	transports/sock/sock_ra.h \
	transports/sock/sock_ra.c \
	transports/sock/sys_raw.h
# The stream: tcp:'s, which tls: carries inside TLS.
stream_sources = transports/sock/inet.h transports/sock/inet.c \
	transports/sock/stream.h transports/sock/stream.c transports/sock/stream_ep.c \
	transports/sock/stream_nb.c transports/sock/stream_connect.c transports/sock/stream_rx.c
if TRANSPORT_TCP
runtime_libidlrt_la_SOURCES += $(stream_sources)
else
if TRANSPORT_TLS
runtime_libidlrt_la_SOURCES += $(stream_sources)
else
if TRANSPORT_UDP
runtime_libidlrt_la_SOURCES += transports/sock/inet.h transports/sock/inet.c
endif
endif
endif
