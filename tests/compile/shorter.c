/*
 * shorter.c - calls that pass less than a bound, as MIG's contract allows: string literals
 * and short buffers for in strings and in variable arrays, short buffers (with their room
 * in *<arg>Cnt) for out variable arrays. run-golden.sh compiles it against the golden
 * headers with gcc -O2 -Wall -Wextra -Werror: the client prototypes must not promise the
 * compiler a whole bound (gcc's -Wstringop-overflow reads an array parameter so).
 */
#include "arrays.h"
#include "bench.h"
#include "strings.h"

kern_return_t shorter_calls(mach_port_t port);

kern_return_t
shorter_calls(mach_port_t port)
{
	char reply[256], canon[64], name[32], msg[64] = "msg", tag[32] = "tag";
	int data[3] = { 1, 2, 3 }, lo[2], back[4];
	int64_t hi[1], total;
	short s[2] = { 4, 5 }, t[1];
	mach_msg_type_number_t loCnt = 2, hiCnt = 1, tCnt = 1, backCnt = 4;
	int n;
	kern_return_t kr = 0;

	kr |= bench_echo(port, "abc", reply);
	kr |= bench_sum(port, data, 3, &total);
	kr |= str_lookup(port, "/x", canon, name);
	kr |= str_greet(port, "hi", msg, tag);
	kr |= str_note(port, "a line");
	kr |= str_blob(port, data, 3, back, &backCnt, &total);
	kr |= samples(port, s, 2, t, &tCnt);
	kr |= split(port, data, 3, lo, &loCnt, hi, &hiCnt, &n);
	return kr;
}
