#!/bin/sh
# tests/lint/layers.sh - which part of the tree may include which (docs/architecture.md,
# "Which part may include which"): the compiler never includes a header of the runtime, a
# transport or a tool; wire/ and base/ include only public headers and their own; the runtime no transport's or
# tool's header; idlcall of the compiler only its library's public header idlc.h; idlbench
# of the compiler idlc.h (and emit.h in idlbench_gen.c alone), of idlcall its library's
# idlcall.h, and none of the runtime's or transports' headers; the examples (examples/bench,
# examples/async, examples/libuv) none of the compiler's, runtime's, transports' or tools'
# headers; inside the runtime, each room its own headers and those of the rooms below it.
# A header is known by its
# name in the folder that holds it, so an include that names another part's header fails
# here however it is spelled. The transports' own rule (the transport kit only) is tests/lint/kit.sh's.
set -u
top=${IDL_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 1

# The header names each part holds.
headers() {
	find "$@" -name '*.h' 2>/dev/null | sed 's|.*/||' | sort -u
}
h_idlc=$(headers idlc)
h_runtime=$(headers runtime)
h_transports=$(headers transports)
h_tools=$(headers tools)

bad=0
nfiles=0
# check DIR ALLOWED FORBIDDEN...: every quoted include of a source under DIR that names a
# header of a FORBIDDEN list, other than the names in ALLOWED, is a failure.
check() {
	dir=$1
	allowed=$2
	shift 2
	forbidden=$(printf '%s\n' "$@" | sort -u)
	for f in $(find "$dir" -name '*.[chly]' | sort); do
		case $f in idlc/lexer.c | idlc/parser.c | idlc/parser.h) continue ;; esac
		nfiles=$((nfiles + 1))
		for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
			name=${inc##*/}
			case " $allowed " in *" $name "*) continue ;; esac
			if printf '%s\n' "$forbidden" | grep -qxF "$name"; then
				echo "$f includes \"$inc\", a header of a part it may not use"
				bad=$((bad + 1))
			fi
		done
	done
}

check idlc "" "$h_runtime" "$h_transports" "$h_tools"
check wire "" "$h_idlc" "$h_runtime" "$h_transports" "$h_tools"
check base "" "$h_idlc" "$h_runtime" "$h_transports" "$h_tools"
check runtime "" "$h_idlc" "$h_transports" "$h_tools"
# The examples are what a user writes: public headers and their own generated stubs only
# (whose names, bench.h, another part's generated headers may share).
check examples "$(headers examples) bench.h bench_types.h" "$h_idlc" "$h_runtime" "$h_transports" "$h_tools"
check tools/idlcall "idlc.h" "$h_idlc" "$h_runtime" "$h_transports"
check tools/idlbench "idlc.h idlcall.h emit.h" "$h_idlc" "$h_runtime" "$h_transports" \
	"$(headers tools/idlcall)"
# Inside the runtime, the rooms (docs/architecture.md, "The runtime's rooms"): a file of
# runtime/ROOM/ includes a room's header by its path ("core/core.h"), of its own room or of
# a room below it; the transport kit, which core's header includes, only from core and ool,
# whose part it is; the string builder (base/) anywhere. runtime/builtins.c, which
# assembles the library, may include any room's header. tests/lint/rooms.sh checks the
# calls on the objects.
room_may() {
	case $1 in
	core) echo "core" ;;
	ool) echo "core ool" ;;
	interp) echo "core ool interp" ;;
	trace) echo "core ool interp trace" ;;
	client) echo "core ool interp trace client" ;;
	server) echo "core ool interp trace server" ;;
	dynamic) echo "core ool interp trace server dynamic" ;;
	*) echo "" ;;
	esac
}
for f in $(find runtime -name '*.[ch]' | sort); do
	case $f in runtime/builtins.c) continue ;; esac
	room=${f#runtime/}
	case $room in */*) room=${room%%/*} ;; *) room=top ;; esac
	may=$(room_may "$room")
	if [ "$room" != top ] && [ -z "$may" ]; then
		echo "$f: runtime/$room/ is no room (core ool interp trace client server dynamic)"
		bad=$((bad + 1))
		continue
	fi
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		case $inc in
		strbuf.h) continue ;;
		transport_kit.h)
			case $room in core | ool) continue ;; esac
			echo "$f includes \"$inc\": only core and ool, whose part the transport kit is, include it"
			bad=$((bad + 1))
			continue
			;;
		*/*.h)
			case " $may " in *" ${inc%%/*} "*) [ -f "runtime/$inc" ] && continue ;; esac
			[ "$room" = top ] && [ "$inc" = core/list.h ] && continue
			;;
		esac
		echo "$f includes \"$inc\": a room of runtime/ includes its own room's headers and those of the rooms below it, by path (${may:-none})"
		bad=$((bad + 1))
	done
done

# idlbench --defs generates the calls of the user's stubs from the emitter's own parameter
# lists, so that they cannot disagree with the generated headers: that one file, and no
# other, may include the compiler's emit.h.
for f in $(grep -l '^[[:space:]]*#[[:space:]]*include[[:space:]]*"emit.h"' tools/idlbench/*.[ch]); do
	[ "$f" = tools/idlbench/idlbench_gen.c ] && continue
	echo "$f includes \"emit.h\": only idlbench_gen.c may"
	bad=$((bad + 1))
done

if [ "$bad" -ne 0 ]; then
	echo "FAIL: $bad include(s) across the parts' boundaries (docs/architecture.md)"
	exit 1
fi
echo "PASS: $nfiles files of idlc/, wire/, runtime/, tools/ and examples/ include only what their part may"
