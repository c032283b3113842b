#!/bin/sh
# tests/lint/kit.sh - the transports use the runtime through its transport kit only: every
# C source and header under transports/ includes, of the tree's own headers, only
# transport_kit.h, the shared socket helpers (sock/NAME.h) and headers of its own folder
# (docs/transports.md, "Writing a transport"). A transport that reached into a room's header
# (core.h, client.h or the server's headers) would tie itself to the runtime's insides.
set -u
top=${IDL_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top/transports" || exit 1
bad=0
files=$(find . -name '*.[ch]' | sed 's|^\./||' | sort)
[ -n "$files" ] || {
	echo "FAIL: no sources under transports/"
	exit 1
}
for f in $files; do
	dir=$(dirname "$f")
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		case $inc in
		transport_kit.h) continue ;;
		sock/*.h) [ -f "$inc" ] && continue ;;
		*/*) ;;
		*) [ -f "$dir/$inc" ] && continue ;;
		esac
		echo "transports/$f includes \"$inc\": only transport_kit.h, sock/*.h and its own folder's headers"
		bad=$((bad + 1))
	done
done
if [ "$bad" -ne 0 ]; then
	echo "FAIL: $bad include(s) outside the transport kit"
	exit 1
fi
echo "PASS: $(echo "$files" | wc -l) files under transports/ include the runtime through transport_kit.h only"
