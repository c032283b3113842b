#!/bin/sh
# conformance.sh - the transport conformance suite (tests/transport/) with the dynamic server
# in place of the compiled bench-server: every routine, concurrency, deadlines, peer death
# and the malformed-message cases must pass against it unchanged. Run twice: with the
# descriptor compiled into the stubs, and with the one built from bench.defs at run time.
set -u

B=${IDL_TOP_BUILDDIR:?run through make check}
S=${IDL_TOP_SRCDIR:?run through make check}
CONF=$B/tests/transport/conformance
if [ ! -x "$CONF" ]; then
	echo "conformance.sh: $CONF is missing (make check builds it)" >&2
	exit 1
fi

rc=0
# The interpreter answers out-of-line routines IDL_ENOTSUP: the suite skips its OOL cases
# for it, by name, and says so.
export IDL_CONF_NO_OOL=1
echo "== dyn-server, compiled descriptor"
IDL_BENCH_SERVER=$B/tests/dynamic/dyn-server DYN_SERVER_DEFS= "$CONF" unix || rc=1
echo "== dyn-server, descriptor from bench.defs"
IDL_BENCH_SERVER=$B/tests/dynamic/dyn-server DYN_SERVER_DEFS=$S/examples/bench/bench.defs \
	"$CONF" unix || rc=1
exit $rc
