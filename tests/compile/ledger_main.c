/*
 * ledger_main.c - tests/golden/ledger.defs end to end, with no C types but idlc's -types
 * output: the server routines, and a client that calls every routine over a unix socket of
 * this process, passing what MIG's contract allows - a 3-byte memo where the bound is 512,
 * string literals, arrays of 4 names where the bound is 16 - and checks what comes back;
 * then that the stubs' own refusals name themselves in idl_errdetail().
 *
 * tests/compile/ledger.sh builds it with gcc -std=c11 -O2 -Wall -Wextra -Werror (any
 * warning about a shorter buffer fails the build), runs it, then runs it under valgrind
 * memcheck, which reports any byte the stubs send that no one wrote.
 *
 *     ledger_main SOCKET_PATH
 *
 * Exits 0 when every check passed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idl/idl.h>
#include <idl/idl_ool.h>

#include "ledger.h"
#include "ledger_S.h"

static int failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/*
 * The server: four accounts with a name, a balance and a label.
 */

#define NACCOUNTS 4

static struct {
	account_name_t name;
	int64_t balance;
	char label[LABEL_T_MAX];
	unsigned char last_memo[MEMO_T_MAX];
	mach_msg_type_number_t last_memo_len;
} accounts[NACCOUNTS] = {
	{ "alice", 100, "", { 0 }, 0 },
	{ "bob", 200, "", { 0 }, 0 },
	{ "carol", 300, "", { 0 }, 0 },
	{ "dave", 400, "", { 0 }, 0 },
};

kern_return_t
S_ledger_deposit(mach_port_t server, int account, int64_t amount, memo_t memo,
		 mach_msg_type_number_t memoCnt)
{
	(void)server;
	if (account < 0 || account >= NACCOUNTS)
		return KERN_FAILURE;
	accounts[account].balance += amount;
	memcpy(accounts[account].last_memo, memo, memoCnt);
	accounts[account].last_memo_len = memoCnt;
	return KERN_SUCCESS;
}

kern_return_t
S_ledger_balances(mach_port_t server, names_t names, mach_msg_type_number_t *namesCnt,
		  amounts_t amounts, mach_msg_type_number_t *amountsCnt)
{
	(void)server;
	for (int i = 0; i < NACCOUNTS; i++) {
		memcpy(names[i], accounts[i].name, sizeof names[i]);
		amounts[i] = accounts[i].balance;
	}
	*namesCnt = NACCOUNTS;
	*amountsCnt = NACCOUNTS;
	return KERN_SUCCESS;
}

kern_return_t
S_ledger_relabel(mach_port_t server, account_t account, code_t code, label_t label, label_t old)
{
	(void)server;
	if (account < 0 || account >= NACCOUNTS || strcmp(code, "ok") != 0)
		return KERN_FAILURE;
	snprintf(old, LABEL_T_MAX, "%s", accounts[account].label);
	snprintf(accounts[account].label, sizeof accounts[account].label, "%s", label);
	return KERN_SUCCESS;
}

kern_return_t
S_ledger_audit(mach_port_t server, stamp_t *stamp, totals_t *totals)
{
	(void)server;
	stamp->elem[0]++;
	stamp->elem[1] += 10;
	totals->credit = 0;
	totals->debit = 0;
	totals->count = NACCOUNTS;
	for (int i = 0; i < NACCOUNTS; i++)
		totals->credit += accounts[i].balance;
	return KERN_SUCCESS;
}

kern_return_t
S_ledger_statement(mach_port_t server, account_t account, text_t *text,
		   mach_msg_type_number_t *textCnt)
{
	char line[128];
	int n;

	(void)server;
	if (account < 0 || account >= NACCOUNTS)
		return KERN_FAILURE;
	n = snprintf(line, sizeof line, "%s: %lld", accounts[account].name,
		     (long long)accounts[account].balance);
	if (n < 0 || (size_t)n >= sizeof line)
		return KERN_FAILURE;
	/* The reply carries it out of line and frees it once sent (dealloc). */
	*text = idl_ool_alloc((size_t)n + 1);
	if (*text == NULL)
		return KERN_FAILURE;
	memcpy(*text, line, (size_t)n + 1);
	*textCnt = (mach_msg_type_number_t)n + 1;
	return KERN_SUCCESS;
}

/*
 * A refusal of the stub's own names itself in idl_errdetail() - after another failure,
 * whose detail must not stay.
 */
static void
details(mach_port_t port)
{
	unsigned char big[600];
	char long_label[LABEL_T_MAX + 6];
	mach_port_t nowhere;
	label_t old;
	int err;

	/* Another failure first: a server that is not there, which the runtime details. */
	err = idl_port_open("unix:/nonexistent/ledger.sock", &nowhere);
	if (err == 0) {
		err = ledger_deposit(nowhere, 0, 1, big, 0);
		idl_port_close(nowhere);
	}
	CHECK(err != 0 && strstr(idl_errdetail(), "/nonexistent/ledger.sock") != NULL);

	memset(big, 'x', sizeof big);
	CHECK(ledger_deposit(port, 0, 1, big, sizeof big) == MIG_ARRAY_TOO_LARGE);
	CHECK(strcmp(idl_errdetail(), "ledger.deposit: memo: 600 elements, above its bound 512") ==
	      0);
	memset(long_label, 'l', sizeof long_label - 1);
	long_label[sizeof long_label - 1] = '\0';
	CHECK(ledger_relabel(port, 0, "ok", long_label, old) == MIG_ARRAY_TOO_LARGE);
	CHECK(strcmp(idl_errdetail(), "ledger.relabel: label: longer than 63 characters") == 0);
	if (failures != 0)
		fprintf(stderr, "ledger: idl_errdetail() says \"%s\"\n", idl_errdetail());
}

static void *
serve(void *srv)
{
	idl_server_run(srv);
	return NULL;
}

/*
 * The client.
 */

static void
calls(mach_port_t port)
{
	const unsigned char memo[3] = { 'p', 'a', 'y' };
	account_name_t names[NACCOUNTS];
	int64_t amounts[NACCOUNTS];
	mach_msg_type_number_t namesCnt = NACCOUNTS, amountsCnt = NACCOUNTS, textCnt = 0;
	label_t old;
	stamp_t stamp = { { 7, 70 } };
	totals_t totals;
	text_t text = NULL;

	CHECK(ledger_deposit(port, 1, 50, memo, sizeof memo) == KERN_SUCCESS);
	CHECK(accounts[1].balance == 250 && accounts[1].last_memo_len == 3 &&
	      memcmp(accounts[1].last_memo, "pay", 3) == 0);
	CHECK(ledger_deposit(port, 9, 1, memo, 1) == KERN_FAILURE);

	/* Room for 4 of the 16 the bound allows: the server returns 4. */
	CHECK(ledger_balances(port, names, &namesCnt, amounts, &amountsCnt) == KERN_SUCCESS);
	CHECK(namesCnt == NACCOUNTS && amountsCnt == NACCOUNTS);
	CHECK(strcmp(names[0], "alice") == 0 && strcmp(names[3], "dave") == 0);
	CHECK(amounts[1] == 250 && amounts[3] == 400);

	CHECK(ledger_relabel(port, 2, "ok", "savings", old) == KERN_SUCCESS);
	CHECK(strcmp(old, "") == 0 && strcmp(accounts[2].label, "savings") == 0);
	CHECK(ledger_relabel(port, 2, "ok", "checking", old) == KERN_SUCCESS);
	CHECK(strcmp(old, "savings") == 0);
	CHECK(ledger_relabel(port, 2, "no", "x", old) == KERN_FAILURE);

	CHECK(ledger_audit(port, &stamp, &totals) == KERN_SUCCESS);
	CHECK(stamp.elem[0] == 8 && stamp.elem[1] == 80);
	CHECK(totals.credit == 100 + 250 + 300 + 400 && totals.debit == 0 && totals.count == 4);

	CHECK(ledger_statement(port, 3, &text, &textCnt) == KERN_SUCCESS);
	CHECK(text != NULL && textCnt == sizeof "dave: 400" && strcmp(text, "dave: 400") == 0);
	if (text != NULL)
		idl_ool_free(text, textCnt);
}

int
main(int argc, char **argv)
{
	char address[512];
	idl_server_t *srv;
	pthread_t thread;
	mach_port_t port;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: ledger_main SOCKET_PATH\n");
		return 2;
	}
	snprintf(address, sizeof address, "unix:%s", argv[1]);
	if ((err = idl_server_create(&srv)) != 0 ||
	    (err = idl_server_add_subsystem(srv, &ledger_subsystem, ledger_server)) != 0 ||
	    (err = idl_server_listen(srv, address)) != 0) {
		fprintf(stderr, "ledger: server: %s (%s)\n", idl_strerror(err), idl_errdetail());
		return 1;
	}
	if (pthread_create(&thread, NULL, serve, srv) != 0) {
		fprintf(stderr, "ledger: no thread for the server\n");
		return 1;
	}
	if ((err = idl_port_open(address, &port)) != 0) {
		fprintf(stderr, "ledger: %s: %s (%s)\n", address, idl_strerror(err),
			idl_errdetail());
		failures++;
	} else {
		calls(port);
		details(port);
		idl_port_close(port);
	}
	idl_server_stop(srv);
	pthread_join(thread, NULL);
	idl_server_destroy(srv);
	if (failures != 0) {
		fprintf(stderr, "ledger: %d checks failed\n", failures);
		return 1;
	}
	printf("ledger: every check passed\n");
	return 0;
}
