#!/bin/sh
# fuzz-demux.sh - make check's smoke run of the server demux fuzzer (tests/fuzz/fuzz_demux.c).
exec "${SHELL:-/bin/sh}" "$(dirname "$0")/fuzz-run.sh" demux
