# examples/bench/local.mk - placeholder
