# data/local.mk - what a user's build needs from an installed idlkit: idlrt.pc, idlc.mk
# (make rules), idlc.m4 (autoconf's IDLC_RULES), the CMake package, and idlc's own
# std_types.defs and mach_types.defs. docs/integration.md is the user's guide;
# tests/consumer/ builds three user projects against a staged install.

# pkg-config's description of the library (configure makes it from idlrt.pc.in); idlc.mk's
# path is one of its variables.
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = idlrt.pc

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

# idlkit's std_types.defs and mach_types.defs, for `#include <mach/std_types.defs>`: idlc
# searches $(pkgdatadir)/include (or $IDLC_INCLUDE_DIR) after the user's -I.
idlcmachdir = $(pkgdatadir)/include/mach
dist_idlcmach_DATA = data/include/mach/std_types.defs data/include/mach/mach_types.defs
