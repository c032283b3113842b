# tests/local.mk - placeholder
