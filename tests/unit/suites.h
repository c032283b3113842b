/*
 * suites.h - the unit suites, one IDL_SUITE(name) per tests/unit/test_*.c.
 *
 * Each test file defines one `CU_SuiteInfo idl_suite_<name>`; main.c expands this list into
 * the declarations and the table it registers. Adding a suite is one line here and one
 * source in tests/unit/local.mk (a transport's suite: in its own local.mk, and here under
 * the configure result that builds it). The suites run in this order.
 */
IDL_SUITE(base_strbuf)
IDL_SUITE(idlc_front)
IDL_SUITE(idlc_names)
IDL_SUITE(idlc_middle)
IDL_SUITE(idlc_back)
IDL_SUITE(idlc_types)
IDL_SUITE(rt_error)
IDL_SUITE(rt_list)
IDL_SUITE(rt_transport)
IDL_SUITE(rt_subsystem)
IDL_SUITE(rt_wire)
IDL_SUITE(rt_hello)
IDL_SUITE(rt_serve_message)
IDL_SUITE(rt_unix)
IDL_SUITE(rt_ool)
IDL_SUITE(rt_service)
#ifdef HAVE_TRANSPORT_UNIX
IDL_SUITE(tr_unix_ra)
IDL_SUITE(tr_unix_bulk)
#endif
#ifdef HAVE_TRANSPORT_TCP
IDL_SUITE(tr_tcp_rx)
#endif
#ifdef HAVE_TRANSPORT_UDP
IDL_SUITE(tr_udp_cache)
IDL_SUITE(tr_udp_ra)
#endif
