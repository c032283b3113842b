# base/local.mk - what the compiler, the runtime and the tools share and none of them owns:
# the one string builder. Each library compiles these sources into itself (as it does
# wire/sighash.c), so that neither library depends on the other.
base_sources = base/strbuf.h base/strbuf.c
