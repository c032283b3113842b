/* Generated from bench.h: the out-of-line stubs it declares. */
#define IB_HAVE_OOL64K 1
#define IB_HAVE_OOL1M 1
