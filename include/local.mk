# include/local.mk - the public headers, installed under $(includedir)/idl: the library's API
# and what generated stubs include. Nothing else is installed from the tree's headers.
idlincludedir = $(includedir)/idl
idlinclude_HEADERS = \
	include/idl/idl.h \
	include/idl/idl_async.h \
	include/idl/idl_dynamic.h \
	include/idl/idl_error.h \
	include/idl/idl_msg.h \
	include/idl/idl_ool.h \
	include/idl/idl_port.h \
	include/idl/idl_server.h \
	include/idl/idl_subsystem.h \
	include/idl/idl_time.h \
	include/idl/idl_tls.h \
	include/idl/idl_trace.h \
	include/idl/idl_transport.h \
	include/idl/mig.h
