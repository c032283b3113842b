# bench.capnp - the Cap'n Proto twin of bench.defs' null, add, bigin, bigout, biginout, ool64k
# and ool1m, for idlbench's capnp-unix and capnp-tcp columns (capnp_peer.cc serves it as the
# bootstrap interface of a two-party connection). The 200-byte big_t and the ool rows' bytes
# are Data: inline in the message's segments, read in place by the receiver.
@0x87ae876b59ea8a11;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("idlbench");

interface Bench {
  null @0 () -> ();
  add @1 (a :Int32, b :Int32) -> (sum :Int32);
  bigin @2 (data :Data) -> ();
  bigout @3 () -> (data :Data);
  biginout @4 (data :Data) -> (data :Data);
  ool64k @5 (data :Data) -> (sum :UInt64);
  ool1m @6 (data :Data) -> (sum :UInt64);
}
