# transports/unix/local.mk - the unix: transport (docs/transports/unix.md): SOCK_SEQPACKET
# socket files; out-of-line data and ports as file descriptors (unix_desc.c).
if TRANSPORT_UNIX
runtime_libidlrt_la_SOURCES += \
	transports/unix/unix_impl.h \
	transports/unix/unix.c \
	transports/unix/unix_nb.c \
	transports/unix/unix_desc.c
endif
