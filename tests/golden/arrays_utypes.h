/* arrays_utypes.h - the client's view of a handle (uimport). */
#ifndef ARRAYS_UTYPES_H
#define ARRAYS_UTYPES_H

typedef int user_handle_t;

#endif
