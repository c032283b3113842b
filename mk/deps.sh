#!/bin/sh
# mk/deps.sh - installs the Debian 12 packages idlkit needs (as root).
#
#   mk/deps.sh          what the build and the main job need: the toolchain, autotools,
#                       flex, bison, libffi, pkg-config, OpenSSL 3 for the tls: transport
#                       (and its command for the tests' certificates), libuv for the
#                       event-loop examples, the peers the transport comparison shows
#                       beside idlkit (ONC RPC, sd-bus, gRPC, Cap'n Proto), and gnuplot
#                       for its charts (--plot)
#   mk/deps.sh --test   that, and what only the test suite needs: CUnit, the sanitizers'
#                       clang and its llvm-symbolizer (llvm-14: the fuzz tests name the
#                       functions libFuzzer covered), clang-format, valgrind, GNU MIG for
#                       the compatibility tests, nftables and iproute2 for the network
#                       tests, CMake for the consumer test, strace, man-db, systemd
#                       (systemd-socket-activate and systemd-analyze, for the service tests)
#
# The README's two commands and .ci/run start here, so the lists live in one place.
set -eu
packages="
	build-essential autoconf automake libtool pkg-config
	flex bison libffi-dev
	libssl-dev openssl
	libuv1-dev
	libtirpc-dev rpcsvc-proto
	libsystemd-dev
	libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
	libcapnp-dev capnproto
	gnuplot-nox
"
test_packages="
	libcunit1-dev
	clang-14 libclang-rt-14-dev llvm-14 clang-format-14
	valgrind strace
	gnumach-dev mig-x86-64-gnu
	iproute2 nftables
	cmake man-db groff-base
	systemd
"
case "${1:-}" in
"") ;;
--test) packages="$packages $test_packages" ;;
*)
	echo "usage: mk/deps.sh [--test]" >&2
	exit 2
	;;
esac
missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing
fi
