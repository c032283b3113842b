#!/bin/sh
# tests/lint/sizes.sh - files small enough to read in one sitting: no C source or header,
# grammar, scanner or shell script over 800 lines outside tests/, and no function over 80
# lines in runtime/ (docs/architecture.md, "Sizes"). A function is counted from the line
# that names it to its closing brace, both at the start of a line, as clang-format lays
# every function out (.clang-format).
set -u
top=${IDL_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 1
max_file=800
max_fn=80
bad=0

# The tracked files: a build inside the tree leaves generated stubs, parsers and scanners
# beside the sources, which are not ours to keep short.
if files=$(git ls-files -- '*.c' '*.h' '*.y' '*.l' '*.sh' 2>/dev/null) && [ -n "$files" ]; then
	for f in $(echo "$files" | grep -v '^tests/'); do
		n=$(wc -l <"$f")
		if [ "$n" -gt "$max_file" ]; then
			echo "$f: $n lines (at most $max_file outside tests/)"
			bad=$((bad + 1))
		fi
	done
	nf=$(echo "$files" | grep -c -v '^tests/')
else
	echo "not a git checkout: the files' sizes are not checked (the functions' are)"
	nf=0
fi

long=$(find runtime -name '*.c' | sort | xargs awk -v max="$max_fn" '
FNR == 1 { name = ""; infn = 0 }
# A line at column 0 that starts a declarator with a parenthesis and is no declaration:
# the function named there, if a brace at column 0 opens a body next.
/^[A-Za-z_][A-Za-z0-9_ \t*]*\(/ && !/;[ \t]*$/ && !infn {
	s = $0
	sub(/\(.*/, "", s)
	n = split(s, w, /[ \t*]+/)
	name = w[n]
	at = FNR
	next
}
/^\{/ { if (name != "") infn = 1; next }
/^\}/ {
	if (infn && FNR - at + 1 > max)
		printf "%s:%d: %s is %d lines (at most %d in runtime/)\n", FILENAME, at, name, FNR - at + 1, max
	infn = 0
	name = ""
}')
if [ -n "$long" ]; then
	echo "$long"
	bad=$((bad + $(echo "$long" | wc -l)))
fi

if [ "$bad" -ne 0 ]; then
	echo "FAIL: $bad file(s) or function(s) too long to read in one sitting"
	exit 1
fi
echo "PASS: $nf files outside tests/ within $max_file lines, runtime/'s functions within $max_fn"
