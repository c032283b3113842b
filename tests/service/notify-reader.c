/*
 * notify-reader.c - the service manager's side of the notify protocol, for
 * tests/service/service.sh: binds a datagram socket where NOTIFY_SOCKET will name it and
 * prints every message that comes, one line each, with the milliseconds since it started
 * and the message's assignments joined by ';':
 *
 *     notify-reader PATH        ->  "12 READY=1;STATUS=0 connections, 0 calls served"
 *
 * It runs until killed; each line is flushed at once, so the test reads them as they come.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	long long t0 = now_ms();
	char buf[4096];
	int fd;

	if (argc != 2 || strlen(argv[1]) >= sizeof sa.sun_path) {
		fprintf(stderr, "usage: notify-reader PATH\n");
		return 2;
	}
	memcpy(sa.sun_path, argv[1], strlen(argv[1]) + 1);
	unlink(argv[1]);
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		perror("notify-reader");
		return 1;
	}
	printf("%lld listening\n", now_ms() - t0);
	fflush(stdout);
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof buf - 1, 0);

		if (n < 0)
			continue;
		buf[n] = '\0';
		for (char *p = buf; *p != '\0'; p++)
			if (*p == '\n')
				*p = ';';
		printf("%lld %s\n", now_ms() - t0, buf);
		fflush(stdout);
	}
}
