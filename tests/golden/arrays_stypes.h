/* arrays_stypes.h - the server's view of a handle (simport). */
#ifndef ARRAYS_STYPES_H
#define ARRAYS_STYPES_H

typedef unsigned int server_handle_t;

#endif
