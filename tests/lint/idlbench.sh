#!/bin/sh
# tests/lint/idlbench.sh - idlbench's files in layers, without a circle (docs/benchmarks.md,
# "How idlbench is built"): each file of tools/idlbench/ belongs to one part, and a part may
# use only the parts below it:
#
#   base     ib_base.h idlbench_base.c                       (nothing)
#   floors   ib_floor.h floor*.c                              base
#   rule     ib_verdict.h idlbench_verdict.c                  base
#   iface    ib_iface.h, the rows, --defs, the generated code base
#   cells    ib_cell.h ib_flight.h ib_user.h, the cells' sides base floors iface
#   run      ib_run.h, columns, probe, rounds, figures        base floors rule iface cells
#   reports  ib_report.h, verdict, tables, JSON, charts, Markdown   every part above but main
#   main     idlbench.c                                       every part
#
# Checked three ways: by includes (a file includes only its part's and its allowed parts'
# headers), by calls (each object's undefined symbols, read with nm from the build, resolve
# only in its own part or an allowed one), and no circle between files at all (tsort of the
# objects' uses). Every file must be in the table below, open with a comment that says what
# it must not know, stay under 800 lines, and hold no function over 80 lines.
: "${IDL_TOP_BUILDDIR:?run me through make check}"
set -u
top=${IDL_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
src=$top/tools/idlbench
obj=$IDL_TOP_BUILDDIR/tools/idlbench
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idlbench-lint.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
bad=0
fail() {
	echo "$*"
	bad=$((bad + 1))
}

# part FILE: the part a file of tools/idlbench/ belongs to, or nothing.
part() {
	case $1 in
	ib_base.h | idlbench_base.c) echo base ;;
	ib_floor.h | floor.c | floor_*.c) echo floors ;;
	ib_verdict.h | idlbench_verdict.c) echo rule ;;
	ib_iface.h | idlbench_rows.c | idlbench_defs.c | idlbench_gen.c | idlbench_build.c) echo iface ;;
	ib_cell.h | ib_flight.h | ib_user.h | idlbench_cell.c | idlbench_idl.c | \
		idlbench_flight.c | idlbench_inflight.c | idlbench_user.c | idlbench_uclient.c | \
		idlbench_peers.c | idlbench_marshal.c | idlbench_oncrpc.c | idlbench_nopeer.c) echo cells ;;
	ib_run.h | idlbench_cols.c | idlbench_probe.c | idlbench_run.c | idlbench_stats.c) echo run ;;
	ib_report.h | idlbench_judge.c | idlbench_legend.c | idlbench_report.c | \
		idlbench_summary.c | idlbench_json.c | idlbench_plot.c | idlbench_markdown.c) echo reports ;;
	idlbench.c) echo main ;;
	esac
}

# may USER USED: whether part USER may use part USED.
may() {
	[ "$1" = "$2" ] && return 0
	case "$1:$2" in
	floors:base | rule:base | iface:base) return 0 ;;
	cells:base | cells:floors | cells:iface) return 0 ;;
	run:base | run:floors | run:rule | run:iface | run:cells) return 0 ;;
	reports:main) return 1 ;;
	reports:* | main:*) return 0 ;;
	esac
	return 1
}

nfiles=0
for f in "$src"/*.c "$src"/*.h; do
	name=${f##*/}
	case $name in idlbench_fns.h) continue ;; esac # generated: a list of bench's routines
	nfiles=$((nfiles + 1))
	p=$(part "$name")
	if [ -z "$p" ]; then
		fail "tools/idlbench/$name: in no layer: add it to tests/lint/idlbench.sh's table"
		continue
	fi
	# The opening comment says what the file holds and what it must not know.
	head -n 1 "$f" | grep -q '^/\*$' && sed -n '1,/\*\//p' "$f" | tr -s ' \n*' ' ' |
		grep -q 'must not' ||
		fail "tools/idlbench/$name: its opening comment does not say what it must not know"
	lines=$(wc -l <"$f")
	[ "$lines" -le 800 ] || fail "tools/idlbench/$name: $lines lines, over 800"
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		[ -f "$src/$inc" ] || continue # another part of the tree's (layers.sh checks those)
		# Made by the build (bench's routines, rpcgen's header): found here when the tree
		# is built in place, and part of no layer.
		case $inc in idlbench_fns.h | oncrpc/*) continue ;; esac
		q=$(part "$inc")
		may "$p" "$q" || fail "tools/idlbench/$name ($p) includes $inc ($q)"
	done
done
# No function over 80 lines: from a line that starts a definition to its closing brace.
awk '/^[A-Za-z_].*\(/ && !/;[ \t]*$/ { name = $0; line = FNR }
	/^\{/ { start = FNR }
	/^\}/ && start { if (FNR - start + 1 > 80) printf "%s:%d: %s: %d lines, over 80\n", FILENAME, line, name, FNR - start + 1; start = 0 }' \
	"$src"/*.c >"$tmp/long"
if [ -s "$tmp/long" ]; then
	cat "$tmp/long"
	bad=$((bad + $(wc -l <"$tmp/long")))
fi

# The calls: what each object of the build defines, and what it uses of another's.
ls "$obj"/idlbench-*.o >/dev/null 2>&1 || {
	echo "FAIL: no objects of idlbench in $obj: build it first"
	exit 1
}
: >"$tmp/defs"
for o in "$obj"/idlbench-*.o; do
	n=${o##*/idlbench-}
	n=${n%.o}.c
	nm -g --defined-only "$o" | awk -v n="$n" 'NF >= 3 { print $3, n }' >>"$tmp/defs"
done
sort -o "$tmp/defs" "$tmp/defs"
: >"$tmp/edges"
for o in "$obj"/idlbench-*.o; do
	n=${o##*/idlbench-}
	n=${n%.o}.c
	p=$(part "$n")
	nm -u "$o" | awk '{ print $NF }' | sort -u | join - "$tmp/defs" | while read -r sym m; do
		[ "$m" = "$n" ] && continue
		echo "$n $m" >>"$tmp/edges"
		q=$(part "$m")
		may "$p" "$q" || echo "$n ($p) calls $sym of $m ($q)"
	done
done >"$tmp/calls"
if [ -s "$tmp/calls" ]; then
	cat "$tmp/calls"
	bad=$((bad + $(wc -l <"$tmp/calls")))
fi
# No circle between the files at all, within a part as across them.
if ! sort -u "$tmp/edges" | tsort >/dev/null 2>"$tmp/loop"; then
	echo "a circle between the files of tools/idlbench:"
	cat "$tmp/loop"
	bad=$((bad + 1))
fi

if [ "$bad" -ne 0 ]; then
	echo "FAIL: $bad finding(s) in tools/idlbench's layers"
	exit 1
fi
echo "PASS: $nfiles files of tools/idlbench in their layers, $(sort -u "$tmp/edges" | wc -l) uses between objects, no circle"
