# tests/harden.mk - hostile input, faults and limits ([harden]); filled by its owner.
