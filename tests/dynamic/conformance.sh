#!/bin/sh
# conformance.sh - the transport conformance suite (tests/transport/) with the dynamic server
# in place of the compiled servers: every routine, concurrency, deadlines, peer death, the
# malformed-message cases and the out-of-line cases (bench.defs's ool64k and ool1m) must pass
# against dyn-server unchanged, and the dialect's cases at run time (oolt.defs: data each
# way with dealloc, ports, arrays of ports, countinout, msgseqno, deferred replies) against
# dyn-oolt-server. Run twice: with the descriptors compiled into the stubs (which alone say
# what the stubs do with ports, dealloc, msgseqno and reply ports), and with the ones built
# from bench.defs and oolt.defs at run time.
set -u

B=${IDL_TOP_BUILDDIR:?run through make check}
S=${IDL_TOP_SRCDIR:?run through make check}
CONF=$B/tests/transport/conformance
if [ ! -x "$CONF" ]; then
	echo "conformance.sh: $CONF is missing (make check builds it)" >&2
	exit 1
fi

rc=0
export IDL_OOLT_SERVER=$B/tests/dynamic/dyn-oolt-server
echo "== dyn-server and dyn-oolt-server, compiled descriptors"
IDL_BENCH_SERVER=$B/tests/dynamic/dyn-server DYN_SERVER_DEFS= DYN_OOLT_DEFS= \
	"$CONF" unix || rc=1
echo "== dyn-server and dyn-oolt-server, descriptors from bench.defs and oolt.defs"
IDL_BENCH_SERVER=$B/tests/dynamic/dyn-server DYN_SERVER_DEFS=$S/examples/bench/bench.defs \
	DYN_OOLT_DEFS=$S/tests/ool/oolt.defs "$CONF" unix || rc=1
exit $rc
