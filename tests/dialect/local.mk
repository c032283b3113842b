# tests/dialect/local.mk - the dialect against the real thing: every .defs of Debian's
# gnumach-dev, -list compared with GNU MIG's (tests/dialect/gnumach.sh says what it checks).
dist_check_SCRIPTS += tests/dialect/gnumach.sh
TESTS += tests/dialect/gnumach.sh
EXTRA_DIST += tests/dialect/shim/mach/mach_types.h tests/dialect/shim/mach/std_types.h
