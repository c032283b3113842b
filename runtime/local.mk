# runtime/local.mk - placeholder
