/*
 * bank_impl.c - bank.defs's routines, state in the server process: open makes an account,
 * deposit adds to an open one (1004 for one not open), withdraw takes from it (1005 when the
 * balance is short). Built into a shared library by tests/bench/idlbench-stateful.sh for
 * idlbench --impl; the server's threads may call it at once, so a lock guards the accounts.
 */
#include <pthread.h>
#include <stdint.h>

#include <idl/idl.h>

#define BANK_ACCOUNTS 16
#define BANK_NOT_OPEN 1004
#define BANK_SHORT 1005
#define BANK_NO_SUCH 1006 /* an account number out of range */

static pthread_mutex_t bank_lock = PTHREAD_MUTEX_INITIALIZER;
static int bank_open[BANK_ACCOUNTS];
static int64_t bank_balance[BANK_ACCOUNTS];

kern_return_t
S_open(mach_port_t server, int account)
{
	(void)server;
	if (account < 0 || account >= BANK_ACCOUNTS)
		return BANK_NO_SUCH;
	pthread_mutex_lock(&bank_lock);
	bank_open[account] = 1;
	pthread_mutex_unlock(&bank_lock);
	return KERN_SUCCESS;
}

/* Adds amount (negative: takes) to an open account; the new balance in *balance. */
static kern_return_t
bank_move(int account, int64_t amount, int64_t *balance)
{
	kern_return_t kr = KERN_SUCCESS;

	if (account < 0 || account >= BANK_ACCOUNTS)
		return BANK_NO_SUCH;
	pthread_mutex_lock(&bank_lock);
	if (!bank_open[account])
		kr = BANK_NOT_OPEN;
	else if (bank_balance[account] + amount < 0)
		kr = BANK_SHORT;
	else
		bank_balance[account] += amount;
	*balance = bank_balance[account];
	pthread_mutex_unlock(&bank_lock);
	return kr;
}

kern_return_t
S_deposit(mach_port_t server, int account, int64_t amount, int64_t *balance)
{
	(void)server;
	return bank_move(account, amount, balance);
}

kern_return_t
S_withdraw(mach_port_t server, int account, int64_t amount, int64_t *balance)
{
	(void)server;
	return bank_move(account, -amount, balance);
}
