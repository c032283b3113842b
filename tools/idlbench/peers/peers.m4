dnl tools/idlbench/peers/peers.m4 - included by configure.ac: idlbench's peer programs (sd-bus,
dnl gRPC, Cap'n Proto), each built when its packages are found, all of them left out with
dnl --disable-peers. Sets AM_CONDITIONALs HAVE_SDBUS, HAVE_GRPC, HAVE_CAPNP, the config.h
dnl macros IDLBENCH_PEERS (the programs built) and IDLBENCH_PEERS_WHY (why the others are not),
dnl and peers_summary for configure's closing summary.

dnl C++ for the gRPC and Cap'n Proto peers; called unconditionally, as automake needs.
AC_PROG_CXX

AC_ARG_ENABLE([peers],
  [AS_HELP_STRING([--disable-peers],
    [build none of idlbench's peer programs (sd-bus, gRPC, Cap'n Proto)])],
  [], [enable_peers=yes])

dnl The peers' own C++ flags: C++17 (gRPC 1.51 and Cap'n Proto 0.9 need C++14 at least) and
dnl our warnings as errors. Generated code gets no -Werror (tools/idlbench/peers/local.mk).
PEER_CXXFLAGS="-std=c++17 -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wno-unused-parameter"
AC_SUBST([PEER_CXXFLAGS])

have_sdbus=no
have_grpc=no
have_capnp=no
why_sdbus=
why_grpc=
why_capnp=
AS_IF([test "x$enable_peers" = "xno"], [
  why_sdbus="--disable-peers"
  why_grpc="--disable-peers"
  why_capnp="--disable-peers"
], [
  dnl sd-bus: libsystemd, plain C.
  PKG_CHECK_MODULES([SDBUS], [libsystemd >= 240], [have_sdbus=yes],
    [why_sdbus="libsystemd >= 240 not found (libsystemd-dev)"])
  AS_IF([test "x$have_sdbus" = "xyes"],
    [SDBUS_VERSION=`$PKG_CONFIG --modversion libsystemd`])

  dnl The C++ peers need a C++17 compiler.
  AC_LANG_PUSH([C++])
  idl_peers_save_CXXFLAGS=$CXXFLAGS
  CXXFLAGS="$CXXFLAGS -std=c++17"
  AC_MSG_CHECKING([whether $CXX compiles C++17])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <optional>]],
      [[std::optional<int> o = 1; return *o - 1;]])],
    [idl_peers_cxx=yes], [idl_peers_cxx=no])
  AC_MSG_RESULT([$idl_peers_cxx])
  CXXFLAGS=$idl_peers_save_CXXFLAGS
  AC_LANG_POP([C++])

  AS_IF([test "x$idl_peers_cxx" != "xyes"], [
    why_grpc="no C++17 compiler (g++)"
    why_capnp="no C++17 compiler (g++)"
  ], [
    dnl gRPC: the library, protobuf's, protoc and the gRPC plugin, protoc of the same
    dnl version as the library (its generated code refuses another).
    AC_PATH_PROG([PROTOC], [protoc])
    AC_PATH_PROG([GRPC_CPP_PLUGIN], [grpc_cpp_plugin])
    PKG_CHECK_MODULES([GRPC], [grpc++ protobuf], [have_grpc=yes],
      [why_grpc="grpc++ or protobuf not found (libgrpc++-dev, libprotobuf-dev)"])
    AS_IF([test "x$have_grpc" = "xyes" && test "x$PROTOC" = "x"],
      [have_grpc=no; why_grpc="protoc not found (protobuf-compiler)"])
    AS_IF([test "x$have_grpc" = "xyes" && test "x$GRPC_CPP_PLUGIN" = "x"],
      [have_grpc=no; why_grpc="grpc_cpp_plugin not found (protobuf-compiler-grpc)"])
    AS_IF([test "x$have_grpc" = "xyes"], [
      idl_protoc_v=`$PROTOC --version 2>/dev/null | $SED -n 's/^libprotoc //p'`
      idl_protobuf_v=`$PKG_CONFIG --modversion protobuf`
      AS_IF([test "x$idl_protoc_v" != "x$idl_protobuf_v"],
        [have_grpc=no
         why_grpc="protoc $idl_protoc_v does not match libprotobuf $idl_protobuf_v"])])

    dnl Cap'n Proto: the RPC and async libraries, the compiler and its C++ plugin, of one
    dnl version.
    AC_PATH_PROG([CAPNP], [capnp])
    AC_PATH_PROG([CAPNPC_CXX], [capnpc-c++])
    PKG_CHECK_MODULES([CAPNP], [capnp-rpc kj-async], [have_capnp=yes],
      [why_capnp="capnp-rpc or kj-async not found (libcapnp-dev)"])
    AS_IF([test "x$have_capnp" = "xyes" &&
           (test "x$CAPNP" = "x" || test "x$CAPNPC_CXX" = "x")],
      [have_capnp=no; why_capnp="capnp or capnpc-c++ not found (capnproto)"])
    AS_IF([test "x$have_capnp" = "xyes"], [
      idl_capnp_v=`$CAPNP --version 2>/dev/null | $SED -n 's/^Cap.n Proto version //p'`
      idl_libcapnp_v=`$PKG_CONFIG --modversion capnp-rpc`
      AS_IF([test "x$idl_capnp_v" != "x$idl_libcapnp_v"],
        [have_capnp=no
         why_capnp="capnp $idl_capnp_v does not match libcapnp $idl_libcapnp_v"])])
  ])
])
AC_SUBST([SDBUS_VERSION])
AM_CONDITIONAL([HAVE_SDBUS], [test "x$have_sdbus" = "xyes"])
AM_CONDITIONAL([HAVE_GRPC], [test "x$have_grpc" = "xyes"])
AM_CONDITIONAL([HAVE_CAPNP], [test "x$have_capnp" = "xyes"])

dnl What configure says, and what idlbench and the tests read from config.h.
idl_peers_built=
idl_peers_why=
peers_summary=
for idl_p in sdbus grpc capnp; do
  eval "idl_have=\$have_$idl_p; idl_why=\$why_$idl_p"
  AS_IF([test "x$idl_have" = "xyes"], [
    idl_peers_built="${idl_peers_built:+$idl_peers_built }$idl_p-peer"
    peers_summary="$peers_summary $idl_p=yes"
  ], [
    idl_peers_why="${idl_peers_why:+$idl_peers_why; }$idl_p: $idl_why"
    peers_summary="$peers_summary $idl_p=no ($idl_why)"
  ])
done
AS_IF([test "x$have_sdbus" = "xyes"],
  [AC_DEFINE([HAVE_PEER_SDBUS], [1], [idlbench's sd-bus peer is built])])
AS_IF([test "x$have_grpc" = "xyes"],
  [AC_DEFINE([HAVE_PEER_GRPC], [1], [idlbench's gRPC peer is built])])
AS_IF([test "x$have_capnp" = "xyes"],
  [AC_DEFINE([HAVE_PEER_CAPNP], [1], [idlbench's Cap'n Proto peer is built])])
AC_DEFINE_UNQUOTED([IDLBENCH_PEERS], ["$idl_peers_built"],
  [idlbench's peer programs built (installed in PKGLIBEXECDIR/peers)])
AC_DEFINE_UNQUOTED([IDLBENCH_PEERS_WHY], ["$idl_peers_why"],
  [why the other peer programs are not built])
peers_summary=`echo $peers_summary`
