#!/bin/sh
# golden.sh - make check's entry for the golden files: runs tests/golden/run-golden.sh with
# the idlc just built (the environment comes from AM_TESTS_ENVIRONMENT in tests/local.mk).
: "${IDLC:?run me through make check}" "${IDL_TOP_SRCDIR:?run me through make check}"
exec "$IDL_TOP_SRCDIR/tests/golden/run-golden.sh" "$IDLC" "$IDL_TOP_SRCDIR"
