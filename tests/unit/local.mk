# tests/unit/local.mk - the unit tests: one CUnit suite per module (tests/unit/suites.h), one
# binary, the compiler's library and the runtime linked in.
if HAVE_CUNIT
check_PROGRAMS += tests/unit/unit
TESTS += tests/unit/unit
tests_unit_unit_SOURCES = \
	tests/unit/main.c \
	tests/unit/suites.h \
	tests/unit/test_base_strbuf.c \
	tests/unit/test_idlc_front.c \
	tests/unit/test_idlc_names.c \
	tests/unit/test_idlc_middle.c \
	tests/unit/test_idlc_back.c \
	tests/unit/test_idlc_types.c \
	tests/unit/rt_fixture.h \
	tests/unit/rt_fixture.c \
	tests/unit/test_rt_error.c \
	tests/unit/test_rt_list.c \
	tests/unit/test_rt_transport.c \
	tests/unit/test_rt_subsystem.c \
	tests/unit/test_rt_wire.c \
	tests/unit/test_rt_hello.c \
	tests/unit/test_rt_serve_message.c \
	tests/unit/test_rt_unix.c \
	tests/unit/test_rt_ool.c \
	tests/unit/test_rt_service.c
tests_unit_unit_CPPFLAGS = $(test_cppflags)
tests_unit_unit_LDADD = idlc/libidlc.a runtime/libidlrt.la $(CUNIT_LIBS)
tests_unit_unit_LDFLAGS = -static
endif
