#!/bin/sh
# fuzz-reply.sh - make check's smoke run of the client reply fuzzer (tests/fuzz/fuzz_reply.c).
exec "${SHELL:-/bin/sh}" "$(dirname "$0")/fuzz-run.sh" reply
