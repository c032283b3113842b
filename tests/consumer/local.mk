# tests/consumer/local.mk - consumer projects: each one is built from a staged
# `make install` of this tree, with only the installed toolchain (data/local.mk's idlc.mk,
# idlc.m4 and CMake package), and runs one call over unix:.
dist_check_SCRIPTS += \
	tests/consumer/test-automake.sh \
	tests/consumer/test-make.sh \
	tests/consumer/test-cmake.sh
TESTS += \
	tests/consumer/test-automake.sh \
	tests/consumer/test-make.sh \
	tests/consumer/test-cmake.sh
EXTRA_DIST += tests/consumer/lib.sh tests/consumer/automake tests/consumer/make \
	tests/consumer/cmake
CLEANFILES += tests/consumer/stage.lock
