# idlc.m4 - autoconf support for projects that generate stubs with idlkit's idlc.
# serial 2
#
# IDLC_RULES([MIN-VERSION])
# -------------------------
# Finds idlc and idlc.mk, the make rules that run it, through idlrt.pc:
#   - IDLC, the compiler: the value given to configure (IDLC=/path/to/idlc), else the `idlc`
#     variable of idlrt.pc, else `idlc` on PATH. A cross build must give IDLC=, or have a
#     build-machine idlc on PATH: idlrt.pc describes the host, so its idlc would not run here.
#   - IDLC_MK, the rules file: the value given to configure, else the `idlc_mk` variable of
#     idlrt.pc (with $PKG_CONFIG_SYSROOT_DIR in front when only that path exists).
# AC_SUBSTs IDLC and IDLC_MK, and idlc_rules as a file: in Makefile.am, a line holding only
# @idlc_rules@ becomes the rules (pattern rules STEM.defs -> STEM.h STEMUser.c STEMServer.c
# STEMServer.h, with dependency files; `IDLC_TYPES = yes` above that line adds STEMTypes.h,
# idlc -types). PKG_CHECK_VAR declares IDLC and IDLC_MK precious, so
# `./configure --help` lists them and a value given once is remembered. MIN-VERSION, when
# given, is the oldest idlrt accepted.
# The runtime's flags are still yours to find: PKG_CHECK_MODULES([IDLRT], [idlrt]).
AC_DEFUN([IDLC_RULES], [
AC_REQUIRE([PKG_PROG_PKG_CONFIG])dnl
m4_ifval([$1],
  [PKG_CHECK_EXISTS([idlrt >= $1], [],
    [AC_MSG_ERROR([idlrt >= $1 is required: install a newer idlkit])])])
AS_IF([test "x$IDLC" = "x"], [
  AS_IF([test "x$cross_compiling" = "xyes"],
        [AC_PATH_PROG([IDLC], [idlc])],
        [PKG_CHECK_VAR([IDLC], [idlrt], [idlc])
         AS_IF([test "x$IDLC" != "x" && test ! -x "$IDLC"], [IDLC=])
         AS_IF([test "x$IDLC" = "x"], [AC_PATH_PROG([IDLC], [idlc])])])])
AC_MSG_CHECKING([for idlc])
AS_IF([test "x$IDLC" = "x"],
      [AC_MSG_RESULT([no])
       AC_MSG_ERROR([idlc not found: install idlkit, or pass IDLC=/path/to/idlc to configure])])
AC_MSG_RESULT([$IDLC])
AS_IF([test "x$IDLC_MK" = "x"], [
  PKG_CHECK_VAR([IDLC_MK], [idlrt], [idlc_mk])
  AS_IF([test "x$IDLC_MK" != "x" && test ! -f "$IDLC_MK" &&
         test "x$PKG_CONFIG_SYSROOT_DIR" != "x" &&
         test -f "$PKG_CONFIG_SYSROOT_DIR$IDLC_MK"],
        [IDLC_MK=$PKG_CONFIG_SYSROOT_DIR$IDLC_MK])])
AC_MSG_CHECKING([for idlc.mk])
AS_IF([test "x$IDLC_MK" = "x" || test ! -f "$IDLC_MK"],
      [AC_MSG_RESULT([no])
       AC_MSG_ERROR([idlc.mk not found ('$IDLC_MK'): pass IDLC_MK=/path/to/idlc.mk])])
AC_MSG_RESULT([$IDLC_MK])
idlc_rules=$IDLC_MK
AC_SUBST_FILE([idlc_rules])dnl
])
