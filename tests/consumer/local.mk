# tests/consumer/local.mk - consumer projects: each one is built from a staged
# `make install` of this tree, with only the installed toolchain (data/local.mk's idlc.mk,
# idlc.m4 and CMake package), and runs one call over unix:.
dist_check_SCRIPTS += \
	tests/consumer/test-automake.sh \
	tests/consumer/test-make.sh \
	tests/consumer/test-cmake.sh \
	tests/consumer/test-readme.sh
TESTS += \
	tests/consumer/test-automake.sh \
	tests/consumer/test-make.sh \
	tests/consumer/test-cmake.sh \
	tests/consumer/test-readme.sh
EXTRA_DIST += tests/consumer/lib.sh \
	tests/consumer/automake/Makefile.am tests/consumer/automake/configure.ac \
	tests/consumer/automake/adder.defs tests/consumer/automake/adder_routines.defs \
	tests/consumer/automake/client.c tests/consumer/automake/server.c \
	tests/consumer/make/Makefile tests/consumer/make/echo.defs \
	tests/consumer/make/echo_types.defs tests/consumer/make/echo_types.h \
	tests/consumer/make/client.c tests/consumer/make/server.c \
	tests/consumer/cmake/CMakeLists.txt tests/consumer/cmake/counter.defs \
	tests/consumer/cmake/include/counter_ops.defs tests/consumer/cmake/client.cc \
	tests/consumer/cmake/server.c
CLEANFILES += tests/consumer/stage.lock
