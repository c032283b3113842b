# idlc.mk - make rules that generate MIG-style stubs from .defs files with idlc (idlkit 0.1.0).
#
# Include it from a GNU make Makefile (plain make), or pull it into an automake Makefile.am
# with IDLC_RULES from idlc.m4 and a line holding only the idlc_rules substitution
# (between @ signs). docs/integration.md in
# idlkit's sources has worked examples; this file is installed as $(pkgdatadir)/idlc.mk and
# pkg-config names it: `pkg-config --variable=idlc_mk idlrt`.
#
# One rule: from STEM.defs, one idlc run writes
#     STEM.h          the client header
#     STEMUser.c      the client stubs
#     STEMServer.c    the server stubs (the demux)
#     STEMServer.h    the server header (prototypes of the routines you write, and the demux)
#     STEM.defs.d     a make dependency file: the four outputs depend on STEM.defs and on
#                     every file it #includes, so editing an included .defs reruns idlc
#
# The files are named after the .defs file. Symbols inside them are named after the
# `subsystem` statement (`NAME_server`, `NAME_subsystem`), as MIG names them; idlc run by hand
# without -header/-user/-server names the files after the subsystem too. So give each .defs
# file the name of its subsystem and both agree. Otherwise, write an explicit rule with
# -header/-user/-server/-sheader (docs/integration.md shows one).
#
# Variables (set them before this file is included, or on the make command line):
#   IDLC           the compiler; for a cross build, the build machine's idlc
#   IDLCFLAGS      the user's flags for idlc (-I DIR, -D NAME, -q ...)
#   AM_IDLCFLAGS   the project's flags for idlc (automake convention)
#   IDLC_DEPFLAGS  how idlc writes the dependency file; empty to write none
#   IDLC_DEPFILES  the dependency files to read back; by default every *.defs.d up to two
#                  directories down from the directory make runs in
#   IDLC_MKDIR_P   how to create the output directory (automake's $(MKDIR_P) when there)
#
# It needs GNU make: a pattern rule with several targets is run once for all of them, so
# `make -j` starts one idlc per .defs file however many of its outputs are wanted at once.
# Outputs go to the build directory and the .defs is found through VPATH, so builds outside
# the source tree work.

IDLC ?= /usr/local/bin/idlc
IDLCFLAGS ?=
AM_IDLCFLAGS ?=
IDLC_DEPFLAGS ?= -MD -MF $*.defs.d -MP
IDLC_DEPFILES ?= $(wildcard *.defs.d */*.defs.d */*/*.defs.d)
IDLC_MKDIR_P ?= $(if $(MKDIR_P),$(MKDIR_P),mkdir -p)

# Silent rules: automake's AM_V_GEN when the project uses it; otherwise `make V=0` makes
# idlc's lines short, and plain make prints the whole command as usual.
idlc__v_GEN_0 = @echo "  IDLC    " $@;
idlc__v_GEN = $(if $(AM_V_GEN),$(AM_V_GEN),$(idlc__v_GEN_$(V)))

%.h %User.c %Server.c %Server.h: %.defs
	@$(IDLC_MKDIR_P) $(@D)
	$(idlc__v_GEN)$(IDLC) $(AM_IDLCFLAGS) $(IDLCFLAGS) $(IDLC_DEPFLAGS) \
		-header $*.h -user $*User.c -server $*Server.c -sheader $*Server.h $<

# Generated files are never deleted as intermediates of a longer chain (calcUser.o from
# calcUser.c from calc.defs): they are what a reader of the build looks at.
.PRECIOUS: %.h %User.c %Server.c %Server.h

-include $(IDLC_DEPFILES)
