#!/bin/sh
# tests/lint/rooms.sh - the runtime's rooms call one way (docs/architecture.md, "The
# runtime's rooms"), checked on the objects libidlrt is built from: every internal name
# (idl_, idl__) that an object of a room uses and does not define resolves in its own room
# or in a room it may use:
#
#   core        -
#   ool         core
#   transports  core, ool, its own folder, transports/sock
#   interp      core, ool
#   trace       core, ool, interp
#   client      core, ool, interp, trace
#   server      core, ool, interp, trace
#   dynamic     core, ool, interp, trace, server
#
# base/ and wire/ (the string builder, the signature hash) are below every room. The one
# call upward is runtime/builtins.c's: the registry (core) calls idl__builtins(), which
# registers the built-in transports and installs the client's port class; builtins.c itself
# may use anything. The client and the server never use each other. Tests are not objects
# of the library, so they may reach anything.
set -u
: "${IDL_TOP_BUILDDIR:?run me through make check}"
cd "$IDL_TOP_BUILDDIR" || exit 1

# The library's objects: the static ones beside each .lo, or libtool's PIC ones where the
# build made no static library.
objs=$(find runtime transports base wire -name '*.lo' 2>/dev/null | grep -v '^tests/' | sort |
	while read -r lo; do
		o=${lo%.lo}.o
		[ -f "$o" ] || o=$(dirname "$lo")/.libs/$(basename "${lo%.lo}").o
		[ -f "$o" ] && echo "$o"
	done)
[ -n "$objs" ] || {
	echo "FAIL: no objects of libidlrt under $IDL_TOP_BUILDDIR (build it first)"
	exit 1
}

# room OBJECT: the room an object belongs to (transports: transports/NAME).
room() {
	case $1 in
	runtime/libidlrt_la-builtins.o | runtime/.libs/libidlrt_la-builtins.o) echo builtins ;;
	runtime/*/*) r=${1#runtime/} && echo "${r%%/*}" ;;
	transports/*/*) r=${1#transports/} && echo "transports/${r%%/*}" ;;
	base/* | wire/*) echo base ;;
	*) echo unknown ;;
	esac
}

# OBJECT ROOM per line of each list, then the names each defines and uses.
tmp=${TMPDIR:-/tmp}/rooms.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
for o in $objs; do
	r=$(room "$o")
	nm -P --defined-only "$o" | awk -v r="$r" '$2 ~ /^[TDBRVWGS]$/ && $1 ~ /^idl_/ { print $1, r }'
done | sort -u >"$tmp/defs"
for o in $objs; do
	r=$(room "$o")
	nm -P -u "$o" | awk -v r="$r" -v o="$o" '$1 ~ /^idl_/ { print $1, r, o }'
done | sort >"$tmp/uses"

# Every object is in a known room, and every room has objects: a file outside the rooms, or
# a room renamed without this list, fails here rather than pass unchecked.
rooms=$(for o in $objs; do room "$o"; done | sort -u | grep -v '^transports/' | tr '\n' ' ')
[ "$rooms" = "base builtins client core dynamic interp ool server trace " ] || {
	echo "FAIL: the objects of libidlrt are in: $rooms(expected base builtins client core dynamic interp ool server trace)"
	# An object outside every room is named: in a build directory reused across a move
	# of files, it is an old object that 'make clean' removes.
	for o in $objs; do
		[ "$(room "$o")" = unknown ] && echo "  outside every room: $o"
	done
	exit 1
}

join "$tmp/uses" "$tmp/defs" | awk '
function may(from, to) {
	if (from == to || to == "base" || from == "builtins")
		return 1
	if (from ~ /^transports\//)
		return to == "core" || to == "ool" || to == "transports/sock"
	if (from == "core")
		return 0
	if (from == "ool")
		return to == "core"
	if (from == "interp")
		return to == "core" || to == "ool"
	if (from == "trace")
		return to == "core" || to == "ool" || to == "interp"
	if (from == "client" || from == "server")
		return to == "core" || to == "ool" || to == "interp" || to == "trace"
	if (from == "dynamic")
		return to == "core" || to == "ool" || to == "interp" || to == "trace" || to == "server"
	return 0
}
# name from object to
{
	name = $1; from = $2; obj = $3; to = $4
	if (may(from, to))
		next
	if (from == "core" && to == "builtins" && name == "idl__builtins")
		next
	how = "up or across the rooms"
	if ((to == "client" || to == "server") && (from == "client" || from == "server"))
		how = "between the client and the server"
	printf "%s (%s) uses %s, which %s defines: a call %s\n", obj, from, name, to, how
	bad++
}
END { exit bad != 0 }' >"$tmp/bad"
st=$?
cat "$tmp/bad"
if [ "$st" -ne 0 ]; then
	echo "FAIL: $(wc -l <"$tmp/bad") use(s) against the rooms' order (docs/architecture.md)"
	exit 1
fi
echo "PASS: $(echo "$objs" | wc -l) objects of libidlrt use only their own room and the rooms below it ($(wc -l <"$tmp/uses") internal names checked)"
