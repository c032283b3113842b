#!/bin/sh
# bad.sh - make check's entry for the bad interfaces: runs tests/bad/run-bad.sh, which checks
# idlc's exact diagnostics for each, with the idlc just built.
: "${IDLC:?run me through make check}" "${IDL_TOP_SRCDIR:?run me through make check}"
exec "$IDL_TOP_SRCDIR/tests/bad/run-bad.sh" "$IDLC" "$IDL_TOP_SRCDIR"
