#!/bin/sh
# no-fuzzer.sh - stands in for the fuzz smoke run when configure found no clang with
# libFuzzer: make check fails rather than skip, and says what to install.
echo "FAIL: no clang with libFuzzer; install clang-14 libclang-rt-14-dev (mk/deps.sh --test)" \
	"and run configure again"
exit 1
