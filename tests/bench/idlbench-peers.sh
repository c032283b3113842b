#!/bin/sh
# idlbench-peers.sh - the peer programs as idlbench's columns (tools/idlbench/peers/): a run
# of null, add, biginout and ool64k over unix, tcp and (when built) tls with every peer this
# build has (grpc-tls compared with idlkit's tls:, idlbench's throwaway certificates), one
# placement, one round of 40 calls (the shape of the output, not its figures). Each peer's columns must have figures, a CPU line and a speedup, and its JSON
# rows the peer's library and version; then a peer whose server answers add wrongly must
# have that said in add's cell (the programs check every answer) while its other rows are
# timed, and with no peer programs where idlbench looks, the run goes on without them and
# says why. A build without the peers (configure found none, or --disable-peers) checks
# that the run says so.
: "${IDL_TOP_BUILDDIR:?run me through make check}"
set -u
fail() {
	echo "idlbench-peers.sh: $*" >&2
	exit 1
}

bench=$IDL_TOP_BUILDDIR/tools/idlbench/idlbench
check=$IDL_TOP_BUILDDIR/tests/bench/idlbench_jsoncheck
peerdir=$IDL_TOP_BUILDDIR/tools/idlbench/peers
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idlbench-peers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

built=$(sed -n 's/^#define IDLBENCH_PEERS "\(.*\)"$/\1/p' "$IDL_TOP_BUILDDIR/config.h")
for t in UNIX TCP; do
	grep -q "^#define HAVE_TRANSPORT_$t 1" "$IDL_TOP_BUILDDIR/config.h" ||
		{ echo "idlbench-peers.sh: no $t transport here"; exit 77; }
done

# run NAME TRANSPORTS ROUTINES [OPTIONS]: one round in one placement, into NAME.txt and
# NAME.json; fails unless it exits 0 with JSON of the documented shape.
run() {
	out=$1
	shift
	"$bench" --transports "$1" --routines "$2" --placement same --rounds 1 --iterations 40 \
		--reps 1 --json "$tmp/$out.json" >"$tmp/$out.txt" 2>"$tmp/$out.err"
	status=$?
	cat "$tmp/$out.txt"
	[ $status -eq 0 ] || { cat "$tmp/$out.err" >&2; fail "$out: idlbench exited $status"; }
	"$check" "$tmp/$out.json" || fail "$out: the JSON does not have its shape"
}

if [ -z "$built" ]; then
	run none unix,tcp null
	grep -q "^note: peers: not built: " "$tmp/none.txt" ||
		fail "a build without the peers does not say why they are missing"
	exit 0
fi

tls=
grep -q "^#define HAVE_TRANSPORT_TLS 1" "$IDL_TOP_BUILDDIR/config.h" && tls=,tls
run all unix,tcp$tls,sdbus,grpc,capnp null,add,biginout,ool64k
for p in $built; do
	name=${p%-peer}
	version=$("$peerdir/$p" version) || fail "$p version failed"
	grep -q "^peers: .*$name: $version" "$tmp/all.txt" ||
		fail "the output does not name $name's version ($version)"
	for t in $("$peerdir/$p" transports); do
		[ "$t" = tls ] && [ -z "$tls" ] && continue
		col=$name-$t
		grep -Eq "^$col +$name +[0-9]" "$tmp/all.txt" || fail "no figures for $col"
		grep -A2 -E "^$col +$name" "$tmp/all.txt" | grep -Eq "^ +cpu us +[0-9.]+\+[0-9.]+ " ||
			fail "no CPU line (client+server) under $col"
		grep -A2 -E "^$col +$name" "$tmp/all.txt" | grep -Eq "^ +speedup +[0-9]" ||
			fail "no speedup under $col"
		for r in null add biginout ool64k; do
			line=$(grep "\"transport\": \"$col\", \"routine\": \"$r\"," "$tmp/all.json") ||
				fail "no JSON row of $r over $col"
			echo "$line" | grep -q "\"peer\": \"$version\", \"speedup\": [0-9]" ||
				fail "the JSON row of $r over $col lacks the peer's version or speedup"
		done
		grep "\"transport\": \"$col\", \"routine\": \"ool64k\"," "$tmp/all.json" |
			grep -q '"metric": "bandwidth"' || fail "ool64k over $col is not a bandwidth"
	done
done

# A server that answers add wrongly: the cell says so, the other rows are timed.
first=${built%% *}
name=${first%-peer}
mkdir "$tmp/wrong"
for p in $built; do
	cat >"$tmp/wrong/$p" <<EOF
#!/bin/sh
if [ "\$1" = serve ]; then exec "$peerdir/$p" "\$@" --wrong add; fi
exec "$peerdir/$p" "\$@"
EOF
	chmod +x "$tmp/wrong/$p"
done
IDLBENCH_PEERDIR=$tmp/wrong run wrong "unix,$name-unix" null,add
grep -Eq "^n/a: add \(.*$name-unix.*\): a wrong answer" "$tmp/wrong.txt" ||
	fail "a wrong answer of add over $name-unix is not said in its cell"
grep -q "\"transport\": \"$name-unix\", \"routine\": \"add\"," "$tmp/wrong.json" &&
	fail "a wrong answer of add over $name-unix was timed"
grep -q "\"transport\": \"$name-unix\", \"routine\": \"null\"," "$tmp/wrong.json" ||
	fail "with add answered wrongly, null over $name-unix was not timed"

# No peer programs where idlbench looks: said, and the run goes on.
IDLBENCH_PEERDIR=$tmp/nowhere run gone unix,tcp,sdbus,grpc,capnp add
grep -q "^note: peers: .*$tmp/nowhere/$first: No such file or directory" "$tmp/gone.txt" ||
	fail "missing peer programs are not said"
grep -q '"transport": "unix", "routine": "add"' "$tmp/gone.json" ||
	fail "without the peers, idlkit's rows were not timed"
exit 0
