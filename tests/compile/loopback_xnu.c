/*
 * loopback_xnu.c - xnu.defs through the loopback transport of loopback.c: out inline arrays
 * of ports, samecount and variable arrays of fixed arrays, with their checks on both sides.
 *
 * Ports are tokens (addresses of static objects) the loopback passes as they are; closing
 * one counts it, so a client that gets more ports than its buffer holds can be seen to
 * release the rest. The ownership account of loopback_dialect.c (lb_ool_live) must come back
 * to where it was: the server stub's buffers of out ports are freed once sent, the client's
 * copies once copied, a refused reply's with the reply.
 */
#include <stdint.h>
#include <string.h>

#include "loopback.h"
#include "xnu.h"
#include "xnu_S.h"

static char lb_tok[40];
#define LB_TOK(i) ((mach_port_t)(void *)&lb_tok[(i)])
static int lb_closed; /* ports closed by the stubs */

void
idl_port_close(idl_port_t port)
{
	if (port != NULL)
		lb_closed++;
}

/* The server's arrays for `n` exception types: masks, handlers, behaviors, flavors. */
static void
lb_fill_exc(uint32_t n, exception_mask_array_t masks, exception_handler_array_t handlers,
	    exception_behavior_array_t behaviors, exception_flavor_array_t flavors)
{
	for (uint32_t i = 0; i < n; i++) {
		masks[i] = (int)(1u << i);
		if (handlers != NULL)
			handlers[i] = LB_TOK(i);
		behaviors[i] = (int)i + 100;
		if (flavors != NULL)
			flavors[i] = (int)i + 200;
	}
}

/* The server routines. `exception_mask` says how many types there are. */

kern_return_t
S_get_exception_ports(mach_port_t task, exception_mask_t exception_mask,
		      exception_mask_array_t masks, mach_msg_type_number_t *masksCnt,
		      exception_handler_array_t old_handlers,
		      exception_behavior_array_t old_behaviors,
		      exception_flavor_array_t old_flavors)
{
	(void)task;
	LB_CHECK(*masksCnt == 32);
	if (exception_mask < 0)
		return KERN_FAILURE;
	*masksCnt = (mach_msg_type_number_t)exception_mask;
	if (*masksCnt <= 32)
		lb_fill_exc(*masksCnt, masks, old_handlers, old_behaviors, old_flavors);
	return KERN_SUCCESS;
}

kern_return_t
S_get_exception_ports_info(mach_port_t port, exception_mask_t exception_mask,
			   exception_mask_array_t masks, mach_msg_type_number_t *masksCnt,
			   exception_handler_info_array_t old_handlers_info,
			   exception_behavior_array_t old_behaviors)
{
	(void)port;
	*masksCnt = (mach_msg_type_number_t)exception_mask;
	lb_fill_exc(*masksCnt, masks, NULL, old_behaviors, NULL);
	for (uint32_t i = 0; i < *masksCnt; i++) {
		old_handlers_info[i].port = 1000 + i;
		old_handlers_info[i].id = 2000 + i;
	}
	return KERN_SUCCESS;
}

static int lb_set_calls;
static uint32_t lb_set_count;

kern_return_t
S_set_exception_ports(mach_port_t task, exception_mask_array_t masks,
		      mach_msg_type_number_t masksCnt, exception_handler_array_t new_handlers)
{
	(void)task;
	lb_set_calls++;
	lb_set_count = masksCnt;
	for (uint32_t i = 0; i < masksCnt; i++)
		LB_CHECK(masks[i] == (int)(1u << i) && new_handlers[i] == LB_TOK(i));
	return KERN_SUCCESS;
}

kern_return_t
S_set_behaviors(mach_port_t task, masks_ool_t masks, mach_msg_type_number_t masksCnt,
		exception_behavior_array_t behaviors)
{
	(void)task;
	lb_set_calls++;
	lb_set_count = masksCnt;
	for (uint32_t i = 0; i < masksCnt; i++)
		LB_CHECK(masks[i] == (int)(1u << i) && behaviors[i] == (int)i + 100);
	idl_ool_free(masks, (size_t)masksCnt * sizeof *masks);
	return KERN_SUCCESS;
}

kern_return_t
S_eventlink_create(mach_port_t task, uint32_t option, eventlink_port_pair_t eventlink_pair)
{
	(void)task;
	if (option != 7)
		return KERN_FAILURE;
	eventlink_pair[0] = LB_TOK(38);
	eventlink_pair[1] = LB_TOK(39);
	return KERN_SUCCESS;
}

static task_restartable_range_t lb_ranges[64];
static mach_msg_type_number_t lb_nranges;

kern_return_t
S_restartable_ranges_register(mach_port_t target_task, task_restartable_range_array_t ranges,
			      mach_msg_type_number_t rangesCnt)
{
	(void)target_task;
	memcpy(lb_ranges, ranges, (size_t)rangesCnt * sizeof *ranges);
	lb_nranges = rangesCnt;
	return KERN_SUCCESS;
}

kern_return_t
S_restartable_ranges_get(mach_port_t target_task, task_restartable_range_array_t ranges,
			 mach_msg_type_number_t *rangesCnt)
{
	(void)target_task;
	LB_CHECK(*rangesCnt == 64);
	memcpy(ranges, lb_ranges, (size_t)lb_nranges * sizeof *ranges);
	*rangesCnt = lb_nranges;
	return KERN_SUCCESS;
}

/*
 * Tampering: the counts of arrays that share one made to disagree, every size still
 * consistent, so that only the samecount check can refuse the message.
 */

/* A request's port array one short of its leader's count. */
static void
lb_short_ports(idl_msg_header_t *m)
{
	idl_desc_t *d = (idl_desc_t *)(void *)(m + 1);

	d[0].size--;
}

/* get_exception_ports_info's reply: masks 2 more, the 8-byte records 1 fewer, so that the
 * variable part keeps its length. */
static void
lb_shift_counts(idl_msg_header_t *m)
{
	uint32_t *cnt = (uint32_t *)(void *)(m + 1);

	cnt[0] += 2;
	cnt[1] -= 1;
}

static void
lb_xnu_exception_ports(void)
{
	exception_mask_t masks[32];
	mach_port_t handlers[32];
	exception_behavior_t behaviors[32];
	thread_state_flavor_t flavors[32];
	exception_handler_info_t info[32];
	mach_msg_type_number_t n = 32;
	kern_return_t kr;
	int closed;

	memset(handlers, 0, sizeof handlers);
	LB_CHECK(get_exception_ports(NULL, 5, masks, &n, handlers, behaviors, flavors) ==
		 KERN_SUCCESS);
	LB_CHECK(n == 5);
	for (uint32_t i = 0; i < 5; i++)
		LB_CHECK(masks[i] == (int)(1u << i) && handlers[i] == LB_TOK(i) &&
			 behaviors[i] == (int)i + 100 && flavors[i] == (int)i + 200);
	/* Room for 3 of 6: three copied, the other three ports closed, the true count. */
	n = 3;
	closed = lb_closed;
	memset(handlers, 0, sizeof handlers);
	kr = get_exception_ports(NULL, 6, masks, &n, handlers, behaviors, flavors);
	LB_CHECK(kr == MIG_ARRAY_TOO_LARGE && n == 6);
	LB_CHECK(handlers[2] == LB_TOK(2) && handlers[3] == NULL && lb_closed == closed + 3);
	LB_CHECK(behaviors[2] == 102 && flavors[2] == 202);
	/* A server that says more than the room it had is refused on its side. */
	n = 32;
	LB_CHECK(get_exception_ports(NULL, 33, masks, &n, handlers, behaviors, flavors) ==
		 MIG_ARRAY_TOO_LARGE);
	LB_CHECK(get_exception_ports(NULL, -1, masks, &n, handlers, behaviors, flavors) ==
		 KERN_FAILURE);

	n = 32;
	LB_CHECK(get_exception_ports_info(NULL, 4, masks, &n, info, behaviors) == KERN_SUCCESS);
	LB_CHECK(n == 4 && info[3].port == 1003 && info[3].id == 2003 && behaviors[3] == 103);
	/* Counts that disagree, in a reply whose sizes all add up: the client refuses it. */
	lb_tamper_reply = lb_shift_counts;
	n = 32;
	LB_CHECK(get_exception_ports_info(NULL, 4, masks, &n, info, behaviors) == MIG_TYPE_ERROR);
	lb_tamper_reply = NULL;

	/* In: one count for both arrays; a request whose port array disagrees is refused
	 * before the routine runs. */
	lb_fill_exc(7, masks, handlers, behaviors, NULL);
	lb_set_calls = 0;
	LB_CHECK(set_exception_ports(NULL, masks, 7, handlers) == KERN_SUCCESS);
	LB_CHECK(lb_set_calls == 2 && lb_set_count == 7);
	LB_CHECK(set_exception_ports(NULL, masks, 33, handlers) == MIG_ARRAY_TOO_LARGE);
	lb_tamper_request = lb_short_ports;
	lb_set_calls = 0;
	LB_CHECK(set_exception_ports(NULL, masks, 7, handlers) == MIG_BAD_ARGUMENTS);
	LB_CHECK(lb_set_calls == 0);
	lb_tamper_request = NULL;

	/* An out-of-line leader: the inline follower's count is its element count. */
	lb_set_calls = 0;
	LB_CHECK(set_behaviors(NULL, masks, 7, behaviors) == KERN_SUCCESS);
	LB_CHECK(lb_set_calls == 2 && lb_set_count == 7);
	LB_CHECK(set_behaviors(NULL, masks, 33, behaviors) == MIG_ARRAY_TOO_LARGE);
}

static void
lb_xnu_ranges(void)
{
	task_restartable_range_t in[3], out[64];
	mach_msg_type_number_t n = 64;

	for (unsigned i = 0; i < 3; i++) {
		in[i].location = 0x1000u * (i + 1);
		in[i].length = (uint16_t)(16 + i);
		in[i].recovery_offs = (uint16_t)(8 + i);
		in[i].flags = 0;
	}
	LB_CHECK(restartable_ranges_register(NULL, in, 3) == KERN_SUCCESS);
	LB_CHECK(lb_nranges == 3 && memcmp(lb_ranges, in, sizeof in) == 0);
	LB_CHECK(restartable_ranges_register(NULL, in, 65) == MIG_ARRAY_TOO_LARGE);
	memset(out, 0, sizeof out);
	LB_CHECK(restartable_ranges_get(NULL, out, &n) == KERN_SUCCESS);
	LB_CHECK(n == 3 && memcmp(out, in, sizeof in) == 0);
	/* Room for 2 of 3 ranges: two copied, the third not, the true count. */
	n = 2;
	memset(out, 0, sizeof out);
	LB_CHECK(restartable_ranges_get(NULL, out, &n) == MIG_ARRAY_TOO_LARGE);
	LB_CHECK(n == 3 && memcmp(out, in, 2 * sizeof *in) == 0 && out[2].location == 0);
}

/*
 * The asynchronous stubs: an inline array of ports lent to the done function (its ports the
 * done function's, its memory freed by the completion), arrays that share one count.
 */

static void
lb_exc_done(void *ctx, kern_return_t kr, const exception_mask_t *masks,
	    mach_msg_type_number_t masksCnt, const exception_handler_t *old_handlers,
	    const exception_behavior_t *old_behaviors, const thread_state_flavor_t *old_flavors)
{
	struct lb_seen *w = lb_saw(ctx, kr);

	w->v[0] = masksCnt;
	if (kr != KERN_SUCCESS) {
		w->ok = masks == NULL && masksCnt == 0 && old_handlers == NULL &&
			old_behaviors == NULL && old_flavors == NULL;
		return;
	}
	w->ok = lb_borrowed(masks, masksCnt * sizeof *masks) &&
		lb_borrowed(old_behaviors, masksCnt * sizeof *old_behaviors) &&
		lb_borrowed(old_flavors, masksCnt * sizeof *old_flavors) && old_handlers != NULL;
	for (uint32_t i = 0; w->ok && i < masksCnt; i++)
		w->ok = masks[i] == (int)(1u << i) && old_handlers[i] == LB_TOK(i) &&
			old_behaviors[i] == (int)i + 100 && old_flavors[i] == (int)i + 200;
}

static void
lb_exc_info_done(void *ctx, kern_return_t kr, const exception_mask_t *masks,
		 mach_msg_type_number_t masksCnt, const exception_handler_info_t *info,
		 const exception_behavior_t *behaviors)
{
	struct lb_seen *w = lb_saw(ctx, kr);

	if (kr != KERN_SUCCESS) {
		w->ok = masks == NULL && masksCnt == 0 && info == NULL && behaviors == NULL;
		return;
	}
	w->ok = masksCnt == 4 && lb_borrowed(info, 4 * sizeof *info) && info[3].port == 1003 &&
		info[3].id == 2003 && behaviors[3] == 103 && masks[3] == 8;
}

static void
lb_pair_done(void *ctx, kern_return_t kr, const mach_port_t *pair)
{
	struct lb_seen *w = lb_saw(ctx, kr);

	w->ok = kr != KERN_SUCCESS ? pair == NULL
				   : pair != NULL && pair[0] == LB_TOK(38) && pair[1] == LB_TOK(39);
}

static void
lb_ranges_done(void *ctx, kern_return_t kr, const task_restartable_range_t *ranges,
	       mach_msg_type_number_t rangesCnt)
{
	lb_saw(ctx, kr)->ok = rangesCnt == lb_nranges &&
			      lb_borrowed(ranges, rangesCnt * sizeof *ranges) &&
			      memcmp(ranges, lb_ranges, rangesCnt * sizeof *ranges) == 0;
}

void
lb_async_xnu(void)
{
	struct lb_seen ex, exf, info, infobad, pair, pairf, rg;
	long live = lb_ool_live;
	int closed = lb_closed;

	memset(&ex, 0, sizeof ex);
	memset(&exf, 0, sizeof exf);
	memset(&info, 0, sizeof info);
	memset(&infobad, 0, sizeof infobad);
	memset(&pair, 0, sizeof pair);
	memset(&pairf, 0, sizeof pairf);
	memset(&rg, 0, sizeof rg);
	LB_CHECK(get_exception_ports_async(NULL, 5, lb_exc_done, &ex, NULL) == 0);
	LB_CHECK(get_exception_ports_async(NULL, -1, lb_exc_done, &exf, NULL) == 0);
	LB_CHECK(get_exception_ports_info_async(NULL, 4, lb_exc_info_done, &info, NULL) == 0);
	LB_CHECK(eventlink_create_async(NULL, 7, lb_pair_done, &pair, NULL) == 0);
	LB_CHECK(eventlink_create_async(NULL, 1, lb_pair_done, &pairf, NULL) == 0);
	LB_CHECK(restartable_ranges_get_async(NULL, lb_ranges_done, &rg, NULL) == 0);
	LB_CHECK(lb_dispatch() == 6);
	LB_CHECK(ex.kr == 0 && ex.ok && ex.v[0] == 5 && exf.kr == KERN_FAILURE && exf.ok);
	LB_CHECK(info.kr == 0 && info.ok && pair.kr == 0 && pair.ok);
	LB_CHECK(pairf.kr == KERN_FAILURE && pairf.ok && rg.kr == 0 && rg.ok);
	/* Counts that disagree: refused, and the reply's array of ports released. */
	LB_CHECK(get_exception_ports_info_async(NULL, 4, lb_exc_info_done, &infobad, NULL) == 0);
	lb_tamper_reply = lb_shift_counts;
	LB_CHECK(lb_dispatch() == 1);
	lb_tamper_reply = NULL;
	LB_CHECK(infobad.kr == MIG_TYPE_ERROR && infobad.ok);
	LB_CHECK(lb_saw_detail(&infobad, "xnu.get_exception_ports_info: malformed reply"));
	/* The ports were the done functions', none closed by a stub; the arrays' memory went
	 * back. */
	LB_CHECK(lb_closed == closed && lb_ool_live == live);
}

void
lb_xnu(void)
{
	long live = lb_ool_live;
	mach_port_t pair[2] = { NULL, NULL };

	lb_xnu_exception_ports();
	LB_CHECK(eventlink_create(NULL, 7, pair) == KERN_SUCCESS);
	LB_CHECK(pair[0] == LB_TOK(38) && pair[1] == LB_TOK(39));
	LB_CHECK(eventlink_create(NULL, 1, pair) == KERN_FAILURE);
	lb_xnu_ranges();
	/* Every buffer of ports the server stubs made, and every copy the clients got, was
	 * freed on every path. */
	LB_CHECK(lb_ool_live == live);
	if (lb_ool_live != live)
		fprintf(stderr, "loopback: xnu: %ld regions allocated and not freed\n",
			lb_ool_live - live);
}
