# transports/shm/local.mk - the shm: transport (docs/transports/shm.md): shared-memory
# rings, their rendezvous over a socket file, out-of-line data without a copy; and its
# conformance row. Its own tests are tests/shm/.
if TRANSPORT_SHM
runtime_libidlrt_la_SOURCES += \
	transports/shm/shm_impl.h \
	transports/shm/shm.c \
	transports/shm/shm_rdv.c \
	transports/shm/shm_ool.c \
	transports/shm/shm_nb.c
tests_transport_conformance_SOURCES += tests/transport/addr_shm.c
endif
