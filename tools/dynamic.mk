# tools/dynamic.mk - automake fragment (included from Makefile.am); filled by the part of the tree it names.
