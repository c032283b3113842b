#!/bin/sh
# tests/lint/format.sh - every C source and header of the tree is as .clang-format says.
#
# The check runs with clang-format 14, which mk/deps.sh --test installs, because another
# version formats some constructs differently and CI and developers must agree. To mend a
# file: clang-format-14 -i FILE (or `make format`).
set -u
top=${IDL_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cf=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$cf" >/dev/null 2>&1; then
	echo "SKIP: $cf is not installed (mk/deps.sh --test installs it)"
	exit 77
fi
cd "$top" || exit 1
# The tracked sources when this is a git checkout; in a release tarball, the sources found
# beside the build's own outputs, which are left out by name.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	files=$(git ls-files '*.c' '*.h')
else
	files=$(find idlc runtime transports include tools examples tests -name '*.[ch]' \
		! -name lexer.c ! -name parser.c ! -name parser.h ! -path '*/oncrpc/*' \
		! -name 'config.h' ! -path '*/golden/*' | sort)
fi
bad=0
for f in $files; do
	[ -f "$f" ] || continue
	if ! "$cf" --dry-run -Werror "$f" >/dev/null 2>&1; then
		echo "not formatted: $f (clang-format-14 -i $f)"
		bad=$((bad + 1))
	fi
done
if [ "$bad" -ne 0 ]; then
	echo "FAIL: $bad file(s) differ from .clang-format"
	exit 1
fi
echo "PASS: $(echo "$files" | wc -w) files as .clang-format says"
