# transports/unix/local.mk - the unix: transport (docs/transports/unix.md): SOCK_SEQPACKET
# socket files; out-of-line data and ports as file descriptors (unix_desc.c); the unit
# suites of its read-ahead and of how it carries out-of-line data.
if TRANSPORT_UNIX
runtime_libidlrt_la_SOURCES += \
	transports/unix/unix_impl.h \
	transports/unix/unix.c \
	transports/unix/unix_nb.c \
	transports/unix/unix_desc.c
if HAVE_CUNIT
tests_unit_unit_SOURCES += tests/unit/test_tr_unix_ra.c tests/unit/test_tr_unix_bulk.c
endif
endif
