#!/bin/sh
# mk/deps.sh - installs the Debian 12 packages idlkit builds and tests with (as root).
# The README's two commands and .ci/run all start here, so the list lives in one place.
set -eu
packages="
	build-essential autoconf automake libtool pkg-config
	flex bison libffi-dev libcunit1-dev
	clang-14 libclang-rt-14-dev clang-format-14
	gnumach-dev mig-x86-64-gnu
	iproute2 nftables
	libtirpc-dev rpcsvc-proto gnuplot-nox
	cmake man-db groff-base
	strace valgrind
"
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
