# tests/abi/local.mk - the library's interface: only idl_ symbols exported, the soname
# libtool's numbers give; each public header compiles alone as C and C++; every exported
# function is in docs/api.md. The man pages render without warnings and name every option
# of --help; every environment variable the library reads is documented.
dist_check_SCRIPTS += \
	tests/abi/symbols.sh \
	tests/abi/headers.sh \
	tests/abi/man.sh \
	tests/abi/env.sh
TESTS += \
	tests/abi/symbols.sh \
	tests/abi/headers.sh \
	tests/abi/man.sh \
	tests/abi/env.sh
EXTRA_DIST += tests/abi/cxx.cc
