/*
 * calc_lib.c - calc.defs's server routines as a shared library, written as
 * docs/idlcall.md shows it, for `idlcall --serve calc.defs ADDRESS calc.so`. The signatures
 * are those of the header idlc would generate (idlc -sheader calcServer.h calc.defs); no
 * generated code is linked. The prototypes stand in for that header, which the build does not
 * generate for this test.
 */
#include <limits.h>
#include <stdint.h>

#include <idl/idl.h>

kern_return_t calc_add(mach_port_t server, int a, int b, int *sum);
kern_return_t calc_div(mach_port_t server, int a, int b, int *quot, int *rem);

kern_return_t
calc_add(mach_port_t server, int a, int b, int *sum)
{
	/* Wrapping addition without signed overflow, as bench's add. */
	*sum = (int)((uint32_t)a + (uint32_t)b);
	return KERN_SUCCESS;
}

kern_return_t
calc_div(mach_port_t server, int a, int b, int *quot, int *rem)
{
	if (b == 0 || (a == INT_MIN && b == -1))
		return KERN_FAILURE;
	*quot = a / b;
	*rem = a % b;
	return KERN_SUCCESS;
}
