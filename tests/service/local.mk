# tests/service/local.mk - servers under a service manager (docs/deploy.md): socket
# activation with systemd-socket-activate, the notify protocol read by a socket of the
# test's own, drains with calls in flight (service.sh); the programs it drives.
check_PROGRAMS += tests/service/svc-server tests/service/svc-client \
	tests/service/notify-reader tests/service/mq-activate
tests_service_svc_server_SOURCES = tests/service/svc-server.c examples/bench/bench_impl.c \
	examples/bench/bench_impl.h
tests_service_svc_server_CPPFLAGS = $(bench_cppflags)
tests_service_svc_server_LDADD = examples/bench/libbenchstubs.a runtime/libidlrt.la
tests_service_svc_server_LDFLAGS = -no-install
tests_service_svc_client_SOURCES = tests/service/svc-client.c
tests_service_svc_client_CPPFLAGS = $(bench_cppflags)
tests_service_svc_client_LDADD = examples/bench/libbenchstubs.a runtime/libidlrt.la
tests_service_svc_client_LDFLAGS = -no-install
tests_service_notify_reader_SOURCES = tests/service/notify-reader.c
tests_service_mq_activate_SOURCES = tests/service/mq-activate.c

dist_check_SCRIPTS += tests/service/service.sh
TESTS += tests/service/service.sh

# The units the test verifies, and docs/deploy.md explains.
EXTRA_DIST += examples/systemd/idlkit-bench.socket examples/systemd/idlkit-bench.service \
	examples/systemd/idlkit-bench-tcp.socket examples/systemd/idlkit-bench-tcp.service \
	examples/systemd/idlkit-bench-port.socket examples/systemd/idlkit-bench-port.service
