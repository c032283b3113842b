#!/bin/sh
# tests/abi/man.sh - the manual pages render without a warning, both through groff and
# through man -l, and each page of a program names every option that program's --help
# names (idlc always; idlbench and idlcall when they were built), so the pages keep up with
# the programs.
set -eu
: "${IDL_TOP_BUILDDIR:?run me from make check}" "${IDL_TOP_SRCDIR:?run me from make check}"

command -v groff >/dev/null 2>&1 || { echo "SKIP: groff is not installed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idl-man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
status=0
man=$IDL_TOP_SRCDIR/man

# render PAGE: plain text, no hyphenation, long lines, so an option is always one word.
render()
{
	groff -man -Tascii -rHY=0 -rLL=200n -P-cbou "$1"
}

for page in "$man"/idlc.1 "$man"/idlbench.1 "$man"/idlcall.1 "$man"/defs.5 \
	"$man"/libidlrt.3; do
	name=$(basename "$page")
	if ! groff -man -Tascii -ww -z "$page" 2>"$tmp/warn" || [ -s "$tmp/warn" ]; then
		echo "FAIL: $name: groff warns:"
		cat "$tmp/warn"
		status=1
	fi
	if command -v man >/dev/null 2>&1; then
		if ! LC_ALL=C MANWIDTH=80 man -l "$page" >"$tmp/out" 2>"$tmp/warn" ||
			[ -s "$tmp/warn" ] || ! grep -q '^NAME' "$tmp/out"; then
			echo "FAIL: $name: man -l does not render it cleanly:"
			cat "$tmp/warn"
			status=1
		fi
	fi
	# Every page has the sections a reader looks for.
	for section in NAME DESCRIPTION "SEE ALSO"; do
		render "$page" | grep -q "^$section" || {
			echo "FAIL: $name has no $section section"
			status=1
		}
	done
	echo "rendered $name"
done

# help_options PROGRAM: the options its --help lists. An option line starts with blanks and
# a dash; its options are the part before the first run of two blanks, separated by ", ",
# each the first word of its item (-I DIR -> -I, --json[=FILE] -> --json).
help_options()
{
	"$1" --help | awk '
		/^[ \t]+-/ {
			sub(/^[ \t]+/, "")
			col = $0
			if (match(col, /  +/))
				col = substr(col, 1, RSTART - 1)
			n = split(col, items, /, */)
			for (i = 1; i <= n; i++) {
				split(items[i], w, /[ =\[]/)
				if (w[1] != "-" && w[1] ~ /^-/)
					print w[1]
			}
		}' | sort -u
}

# check_options PROGRAM PAGE
check_options()
{
	help_options "$1" >"$tmp/opts"
	[ -s "$tmp/opts" ] || {
		echo "FAIL: found no options in $1 --help"
		status=1
		return
	}
	render "$2" >"$tmp/page"
	missing=
	while read -r opt; do
		grep -q -E -e "(^|[^A-Za-z0-9_-])$opt([^A-Za-z0-9_-]|\$)" "$tmp/page" ||
			missing="$missing $opt"
	done <"$tmp/opts"
	if [ -n "$missing" ]; then
		echo "FAIL: $(basename "$2") does not document these options of $(basename "$1") --help:$missing"
		status=1
	else
		echo "$(basename "$2"): all $(wc -l <"$tmp/opts") options of --help documented"
	fi
}

check_options "$IDL_TOP_BUILDDIR/idlc/idlc" "$man/idlc.1"
if [ -x "$IDL_TOP_BUILDDIR/tools/idlbench/idlbench" ]; then
	check_options "$IDL_TOP_BUILDDIR/tools/idlbench/idlbench" "$man/idlbench.1"
else
	echo "note: idlbench not built here: its page's options not checked"
fi
if [ -x "$IDL_TOP_BUILDDIR/tools/idlcall/idlcall" ]; then
	check_options "$IDL_TOP_BUILDDIR/tools/idlcall/idlcall" "$man/idlcall.1"
else
	echo "note: idlcall not built here: its page's options not checked"
fi
exit $status
