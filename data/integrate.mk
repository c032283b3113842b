# data/integrate.mk - what a user's build needs from an installed idlkit: idlc.mk (make rules),
# idlc.m4 (autoconf's IDLC_RULES), the CMake package, the man pages; and the tests that build
# three consumer projects (automake, plain make, CMake) against a staged install, check the
# library's exported symbols and the public headers, and check the man pages against --help.
# docs/integration.md is the user's guide; docs/api.md the library's reference and policy.

# The installed files that name install paths are made here rather than by configure, as
# the autoconf manual advises for installation directories: make expands them in full
# (configure would leave ${prefix} inside), and configure.ac needs no entry for them.
integrate_subst = $(SED) \
	-e 's|@VERSION[@]|$(VERSION)|g' \
	-e 's|@prefix[@]|$(prefix)|g' \
	-e 's|@bindir[@]|$(bindir)|g' \
	-e 's|@libdir[@]|$(libdir)|g' \
	-e 's|@includedir[@]|$(includedir)|g' \
	-e 's|@pkgdatadir[@]|$(pkgdatadir)|g' \
	-e "s|@IDLRT_SOVERSION[@]|$$so|g" \
	-e "s|@IDLRT_STATIC_LIBS[@]|$$libs|g"

# The soname's number is libtool's current - age (IDLRT_LT_VERSION is current:revision:age).
# A static link of the runtime needs the libraries it is linked with: its -l and -pthread
# flags, as a CMake list.
integrate_gen = \
	so=`echo '$(IDLRT_LT_VERSION)' | awk -F: '{ print $$1 - $$3 }'` && \
	libs=`for w in $(runtime_libidlrt_la_LIBADD); do \
		case $$w in -l*|-pthread) printf ';%s' "$$w";; esac; done` && \
	$(MKDIR_P) $(@D) && rm -f $@ $@.tmp && \
	$(integrate_subst) $< > $@.tmp && mv -f $@.tmp $@

data/idlc.mk: $(srcdir)/data/idlc.mk.in Makefile
	$(AM_V_GEN)$(integrate_gen)
data/cmake/idlkitConfig.cmake: $(srcdir)/data/cmake/idlkitConfig.cmake.in Makefile
	$(AM_V_GEN)$(integrate_gen)
data/cmake/idlkitConfigVersion.cmake: $(srcdir)/data/cmake/idlkitConfigVersion.cmake.in Makefile
	$(AM_V_GEN)$(integrate_gen)

pkgdata_DATA += data/idlc.mk
aclocaldir = $(datadir)/aclocal
dist_aclocal_DATA = data/idlc.m4
idlkitcmakedir = $(libdir)/cmake/idlkit
idlkitcmake_DATA = data/cmake/idlkitConfig.cmake data/cmake/idlkitConfigVersion.cmake
CLEANFILES += data/idlc.mk $(idlkitcmake_DATA)
EXTRA_DIST += data/idlc.mk.in data/cmake/idlkitConfig.cmake.in \
	data/cmake/idlkitConfigVersion.cmake.in

# Man pages. idlcall(1) is installed by tools/idlcall/local.mk with the program.
dist_man_MANS += man/idlc.1 man/idlbench.1 man/defs.5 man/libidlrt.3

# The library's interface: only idl_ symbols exported, the soname libtool's numbers give;
# each public header compiles alone as C and C++; every exported function is in docs/api.md.
# The man pages render without warnings and name every option of --help.
dist_check_SCRIPTS += \
	tests/abi/symbols.sh \
	tests/abi/headers.sh \
	tests/abi/man.sh
TESTS += \
	tests/abi/symbols.sh \
	tests/abi/headers.sh \
	tests/abi/man.sh

# Consumer projects: each one is built from a staged `make install` of this tree, with only
# the installed toolchain, and runs one call over unix:.
dist_check_SCRIPTS += \
	tests/consumer/test-automake.sh \
	tests/consumer/test-make.sh \
	tests/consumer/test-cmake.sh
TESTS += \
	tests/consumer/test-automake.sh \
	tests/consumer/test-make.sh \
	tests/consumer/test-cmake.sh
EXTRA_DIST += tests/consumer/lib.sh tests/consumer/automake tests/consumer/make \
	tests/consumer/cmake tests/abi/cxx.cc
CLEANFILES += tests/consumer/stage.lock
