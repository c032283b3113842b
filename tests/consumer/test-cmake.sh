#!/bin/sh
# tests/consumer/test-cmake.sh - a user's CMake project (tests/consumer/cmake) built from a staged
# install: find_package(idlkit) finds the package moved under the staging directory,
# idl_generate() generates the server side for a C server and the client side for a C++
# client, editing an included .defs regenerates both, and the client calls the server.
. "${IDL_TOP_SRCDIR:?run me from make check}/tests/consumer/lib.sh"

for tool in cmake flock; do
	command -v $tool >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done
command -v "${CXX:-g++}" >/dev/null 2>&1 || command -v c++ >/dev/null 2>&1 ||
	{ echo "SKIP: no C++ compiler"; exit 77; }

stage_install
src=$(copy_project cmake)
build=$consumer_tmp/build
# The staged prefix: cmake looks for <prefix>/lib*/cmake/idlkit/idlkitConfig.cmake.
prefix=$STAGE$(pkg_var prefix)

set -- -DCMAKE_PREFIX_PATH="$prefix"
cmake -S "$src" -B "$build" "$@" >"$consumer_tmp/cmake.log" 2>&1 || {
	cat "$consumer_tmp/cmake.log" >&2
	fail "cmake configure of the consumer project"
}
grep -qx "IDLC_EXECUTABLE:FILEPATH=$STAGE_IDLC" "$build/CMakeCache.txt" || {
	grep IDLC_EXECUTABLE "$build/CMakeCache.txt" >&2
	fail "idlkitConfig.cmake did not follow the staged install to its idlc"
}
echo "ok: find_package(idlkit) found the staged package and $STAGE_IDLC"

# From here a counting idlc, as a cross build would set it.
idlc_counting "$consumer_tmp/idlc"
cmake -DIDLC_EXECUTABLE="$consumer_tmp/idlc" "$build" >/dev/null 2>&1 || fail "cmake reconfigure"
cmake --build "$build" -j 2 >"$consumer_tmp/build.log" 2>&1 || {
	cat "$consumer_tmp/build.log" >&2
	fail "cmake --build of the consumer project"
}
expect_runs 2 "one idlc run for the server side, one for the client side"
[ -f "$build/stubs/counter.h" ] && [ -f "$build/stubs/counterUser.c" ] ||
	fail "the client side is not in OUTPUT_DIR stubs"
[ -f "$build/counterServer.c" ] && [ -f "$build/counterServer.h" ] ||
	fail "the server side is not in the binary directory"
[ ! -f "$build/counterUser.c" ] || fail "SERVER alone generated the client side too"

run_call "$build/counter-server" "$build/counter-client" "total 7"

cmake --build "$build" >/dev/null 2>&1 || fail "second build"
expect_runs 2 "nothing changed, nothing regenerated"
if idlc_has_depfiles; then
	sleep 1
	touch "$src/include/counter_ops.defs"
	cmake --build "$build" >/dev/null 2>&1 || fail "build after touch"
	expect_runs 4 "editing the included counter_ops.defs regenerated both sides"
else
	echo "note: this idlc writes no dependency files (no -MD): included .defs not followed"
fi

# idl_generate(... FUZZ FUZZ_CLIENT): the harnesses come with the target that asks for them.
cmake --build "$build" --target counter-fuzz >"$consumer_tmp/fuzz.log" 2>&1 || {
	cat "$consumer_tmp/fuzz.log" >&2
	fail "cmake --build --target counter-fuzz"
}
grep -q 'idl_server_serve_message' "$build/fuzz/counter-fuzz.c" ||
	fail "FUZZ generated no counter-fuzz.c"
grep -q 'idl_port_open_memory' "$build/fuzz/counter-fuzz-client.c" ||
	fail "FUZZ_CLIENT generated no counter-fuzz-client.c"
echo "ok: idl_generate(FUZZ FUZZ_CLIENT) wrote counter-fuzz.c and counter-fuzz-client.c"
