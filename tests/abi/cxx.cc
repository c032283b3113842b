// cxx.cc - a C++ program using the runtime through <idl/idl.h>: it links only if every
// declaration it uses has C linkage.
#include <cstdio>
#include <cstring>

#include <idl/idl.h>

int
main()
{
	idl_port_t port = IDL_PORT_NULL;
	int err = idl_port_open("nosuchscheme:x", &port);

	if (err != IDL_ENOSCHEME) {
		std::printf("idl_port_open gave %s, expected ENOSCHEME\n", idl_errname(err));
		return 1;
	}
	if (std::strcmp(idl_errname(MIG_BAD_ID), "MIG_BAD_ID") != 0) {
		std::printf("idl_errname(MIG_BAD_ID) is %s\n", idl_errname(MIG_BAD_ID));
		return 1;
	}
	std::printf("idlrt %s: %s\n", idl_version(), idl_strerror(err));
	return 0;
}
