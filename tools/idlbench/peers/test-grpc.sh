#!/bin/sh
# test-grpc.sh - the grpc peer against itself: peer-test.sh says what is checked.
exec "${SHELL:-/bin/sh}" "${IDL_TOP_SRCDIR:?run me through make check}/tools/idlbench/peers/peer-test.sh" grpc
