# mk/idlc-stubs.mk - the one rule by which the tree's own interfaces get their stubs from the
# idlc just built (the example, the tests' interfaces). A user's build has data/idlc.mk
# instead; this rule differs from it where the tree needs it: idlc runs in the directory of
# the .defs, so that the banner and the compile-time checks of the generated code name
# "bench.defs" rather than a path that depends on where the tree was built, and the stubs
# depend on idlc itself, so that a changed compiler regenerates them.
#
# Use, for DIR/STEM.defs whose stubs go to OUT/ in the build directory (OUT may be DIR):
#
#     stem_gen = OUT/STEM.h OUT/STEMUser.c OUT/STEMServer.c OUT/STEMServer.h
#     OUT/STEM.stamp: $(srcdir)/DIR/STEM.defs $(idlc_built)
#     	$(AM_V_GEN)$(idlc_stubs)
#     $(stem_gen): OUT/STEM.stamp
#     	$(idlc_stubs_again)
#     BUILT_SOURCES += $(stem_gen)
#     CLEANFILES += $(stem_gen) OUT/STEM.stamp
#
# A stamp may stand for several interfaces: every .defs among its prerequisites gets its
# four files in OUT/, named after the .defs.
#
# idlc writes the four files of an interface in one run. The stamp is the one target that
# runs it, so that make -j never starts two idlc runs for one interface; it is touched
# before idlc starts, so it is never newer than the files it stands for; a failed run
# leaves no stamp. A generated file removed by hand makes idlc run again.
# `#include <mach/std_types.defs>` finds the tree's own data/include.

idlc_built = idlc/idlc$(EXEEXT)

# The options every idlc run of the tree's own builds and tests adds: none now that libidlrt
# has the asynchronous runtime the asynchronous stubs call (<idl/idl_async.h>). It stays a
# variable so that a build can leave them out (-noasync); tests/local.mk hands the value to
# the test scripts that run idlc themselves (tests/compile/ledger.sh, the consumer
# projects).
IDLC_TREE_FLAGS =

idlc_stubs = out='$(abs_builddir)'/$(@D); \
	$(MKDIR_P) $(@D) && rm -f $@.tmp && touch $@.tmp || exit 1; \
	for defs in $^; do \
		case $$defs in *.defs) ;; *) continue ;; esac; \
		stem=`basename "$$defs" .defs`; \
		(cd `dirname "$$defs"` && IDLC_INCLUDE_DIR='$(abs_top_srcdir)/data/include' \
			'$(abs_top_builddir)/$(idlc_built)' $(IDLC_TREE_FLAGS) \
			-header "$$out/$$stem.h" -user "$$out/$${stem}User.c" \
			-server "$$out/$${stem}Server.c" -sheader "$$out/$${stem}Server.h" \
			"$$stem.defs") || { rm -f $@.tmp; exit 1; }; \
	done; \
	mv -f $@.tmp $@

idlc_stubs_again = @test -f $@ || { rm -f $<; $(MAKE) $(AM_MAKEFLAGS) $<; }
