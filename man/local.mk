# man/local.mk - the manual pages, installed with the programs and the library they describe
# (tests/abi/man.sh checks them against --help).
dist_man_MANS += man/idlc.1 man/idlbench.1 man/idlcall.1 man/defs.5 man/libidlrt.3
