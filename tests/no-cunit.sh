#!/bin/sh
# no-cunit.sh - stands in for the CUnit test programs when configure found no CUnit, so that
# make check fails with the reason instead of passing without them.
echo "CUnit is missing: the unit tests and the transport conformance suite did not run." >&2
echo "Install what the tests need (mk/deps.sh --test), run configure again, then make check." >&2
exit 1
