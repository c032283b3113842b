/* mach_types.h - for tests/dialect/gnumach.sh: GNU Mach's C header, as idlkit provides its types.
 */
#include <idl/mig.h>
