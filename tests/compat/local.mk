# tests/compat/local.mk - idlc -compat on pairs of interfaces, one pair per rule of
# docs/evolution.md (tests/compat/pairs/NAME/old.defs and new.defs, with the expected lines
# and JSON), and the hello on the same pairs over unix: (agree).
check_PROGRAMS += tests/compat/agree
tests_compat_agree_SOURCES = tests/compat/agree.c
tests_compat_agree_CPPFLAGS = $(test_cppflags)
tests_compat_agree_LDADD = idlc/libidlc.a runtime/libidlrt.la
tests_compat_agree_LDFLAGS = -static
dist_check_SCRIPTS += tests/compat/compat.sh
TESTS += tests/compat/compat.sh
DIST_PATTERNS += tests/compat/pairs/*/old.defs tests/compat/pairs/*/new.defs \
	tests/compat/pairs/*/expect.txt tests/compat/pairs/*/expect.json

# regen-compat: rewrites the expected lines and JSON of every pair from the current idlc.
# Review the diff: each line is a verdict.
regen-compat: idlc/idlc$(EXEEXT)
	IDL_REGEN_COMPAT=1 IDLC='$(abs_top_builddir)/idlc/idlc$(EXEEXT)' \
		IDL_TOP_SRCDIR='$(abs_top_srcdir)' IDL_TOP_BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/compat/compat.sh
.PHONY: regen-compat
