/*
 * udpshim.c - a deterministic lossy link for udp: tests: a UDP relay between clients and
 * a server on loopback that drops, duplicates, reorders and delays datagrams in both
 * directions, deciding each datagram's fate with a seeded generator.
 *
 *     udpshim [-s SEED] [-l LOSS] [-d DUP] [-r REORDER] [-D DELAY_MS] PORT SERVER_PORT
 *
 * LOSS, DUP and REORDER are percentages; each datagram is dropped with LOSS, else sent
 * after a delay drawn from 0..DELAY_MS (a reordered one waits DELAY_MS more, so that later
 * ones overtake it), and sent a second time, with its own delay, with DUP. Clients send to
 * 127.0.0.1:PORT; each client gets its own socket towards 127.0.0.1:SERVER_PORT, so the
 * server sees one peer per client. Prints "ready" once listening; on SIGTERM prints its
 * counts on stderr and exits 0.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#define SHIM_MAX_CLIENTS 64
#define SHIM_MAX_QUEUE 8192
#define SHIM_MAX_DGRAM 65536

struct shim_pkt {
	int64_t due_ns;
	int fd; /* the socket to send from */
	struct sockaddr_in to; /* sin_port 0: the socket is connected */
	size_t len;
	unsigned char *data;
};

struct shim_client {
	struct sockaddr_in addr;
	int fd; /* connected to the server */
};

static volatile sig_atomic_t shim_stop;
static uint64_t shim_rng;
static unsigned shim_loss, shim_dup, shim_reorder, shim_delay_ms;
static struct shim_pkt shim_q[SHIM_MAX_QUEUE];
static size_t shim_qlen;
static unsigned long shim_in, shim_out, shim_dropped, shim_duped, shim_reordered;

static void
shim_on_signal(int sig)
{
	(void)sig;
	shim_stop = 1;
}

static int64_t
shim_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* xorshift64*: the same seed gives the same decisions for the same datagram sequence. */
static unsigned
shim_rand(unsigned mod)
{
	shim_rng ^= shim_rng >> 12;
	shim_rng ^= shim_rng << 25;
	shim_rng ^= shim_rng >> 27;
	return (unsigned)((shim_rng * 0x2545f4914f6cdd1dull) >> 33) % mod;
}

static void
shim_enqueue(int fd, const struct sockaddr_in *to, const void *data, size_t len, int64_t delay_ns)
{
	struct shim_pkt *p = &shim_q[shim_qlen];

	/* A full queue is a congested link: it drops. */
	if (shim_qlen == SHIM_MAX_QUEUE || (p->data = malloc(len ? len : 1)) == NULL) {
		shim_dropped++;
		return;
	}
	memcpy(p->data, data, len);
	p->len = len;
	p->fd = fd;
	if (to != NULL)
		p->to = *to;
	else
		memset(&p->to, 0, sizeof p->to);
	p->due_ns = shim_now() + delay_ns;
	shim_qlen++;
}

/* Decides the fate of one datagram. */
static void
shim_route(int fd, const struct sockaddr_in *to, const void *data, size_t len)
{
	int copies;

	shim_in++;
	if (shim_rand(100) < shim_loss) {
		shim_dropped++;
		return;
	}
	copies = shim_rand(100) < shim_dup ? 2 : 1;
	shim_duped += copies == 2;
	for (int i = 0; i < copies; i++) {
		int64_t delay = shim_delay_ms ? (int64_t)shim_rand(shim_delay_ms + 1) * 1000000 : 0;

		if (shim_rand(100) < shim_reorder) {
			delay += (int64_t)(shim_delay_ms + 1) * 1000000;
			shim_reordered++;
		}
		shim_enqueue(fd, to, data, len, delay);
	}
}

/* Sends what is due; returns the milliseconds until the next is due, or -1. */
static int
shim_flush(void)
{
	int64_t now = shim_now(), next = -1;

	for (size_t i = 0; i < shim_qlen;) {
		struct shim_pkt *p = &shim_q[i];

		if (p->due_ns > now) {
			if (next < 0 || p->due_ns < next)
				next = p->due_ns;
			i++;
			continue;
		}
		if (p->to.sin_port != 0)
			(void)sendto(p->fd, p->data, p->len, MSG_NOSIGNAL | MSG_DONTWAIT,
				     (struct sockaddr *)&p->to, sizeof p->to);
		else
			(void)send(p->fd, p->data, p->len, MSG_NOSIGNAL | MSG_DONTWAIT);
		shim_out++;
		free(p->data);
		shim_q[i] = shim_q[--shim_qlen];
		shim_q[shim_qlen].data = NULL;
	}
	return next < 0 ? -1 : (int)((next - now) / 1000000) + 1;
}

static int
shim_socket(unsigned port, int do_bind, int do_connect)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), big = 4 << 20;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
	if ((do_bind && bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) ||
	    (do_connect && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

int
main(int argc, char **argv)
{
	static unsigned char buf[SHIM_MAX_DGRAM];
	struct shim_client clients[SHIM_MAX_CLIENTS];
	struct pollfd pfd[1 + SHIM_MAX_CLIENTS];
	struct sigaction sa;
	unsigned nclients = 0, port, server_port;
	int opt, lfd;

	shim_rng = 1;
	while ((opt = getopt(argc, argv, "s:l:d:r:D:")) != -1) {
		switch (opt) {
		case 's':
			shim_rng = strtoull(optarg, NULL, 10) * 2654435761u + 1;
			break;
		case 'l':
			shim_loss = (unsigned)atoi(optarg);
			break;
		case 'd':
			shim_dup = (unsigned)atoi(optarg);
			break;
		case 'r':
			shim_reorder = (unsigned)atoi(optarg);
			break;
		case 'D':
			shim_delay_ms = (unsigned)atoi(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2)
		goto usage;
	port = (unsigned)atoi(argv[optind]);
	server_port = (unsigned)atoi(argv[optind + 1]);
	if ((lfd = shim_socket(port, 1, 0)) < 0) {
		perror("udpshim: bind");
		return 1;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = shim_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("ready\n");
	fflush(stdout);

	while (!shim_stop) {
		int timeout = shim_flush();

		pfd[0].fd = lfd;
		pfd[0].events = POLLIN;
		for (unsigned i = 0; i < nclients; i++) {
			pfd[1 + i].fd = clients[i].fd;
			pfd[1 + i].events = POLLIN;
		}
		if (poll(pfd, 1 + nclients, timeout) < 0) {
			if (errno == EINTR)
				continue;
			perror("udpshim: poll");
			return 1;
		}
		if (pfd[0].revents & POLLIN) {
			struct sockaddr_in from;
			socklen_t fl = sizeof from;
			ssize_t n = recvfrom(lfd, buf, sizeof buf, MSG_DONTWAIT,
					     (struct sockaddr *)&from, &fl);
			unsigned c;

			for (c = 0; n >= 0 && c < nclients; c++)
				if (clients[c].addr.sin_port == from.sin_port &&
				    clients[c].addr.sin_addr.s_addr == from.sin_addr.s_addr)
					break;
			if (n >= 0 && c == nclients && nclients < SHIM_MAX_CLIENTS) {
				clients[c].addr = from;
				clients[c].fd = shim_socket(server_port, 0, 1);
				if (clients[c].fd >= 0)
					nclients++;
			}
			if (n >= 0 && c < nclients)
				shim_route(clients[c].fd, NULL, buf, (size_t)n);
		}
		for (unsigned i = 0; i < nclients; i++) {
			ssize_t n;

			if (!(pfd[1 + i].revents & (POLLIN | POLLERR)))
				continue;
			n = recv(clients[i].fd, buf, sizeof buf, MSG_DONTWAIT);
			/* The reply goes back from the port the client sent to. */
			if (n >= 0)
				shim_route(lfd, &clients[i].addr, buf, (size_t)n);
		}
	}
	fprintf(stderr, "udpshim: in %lu out %lu dropped %lu duplicated %lu reordered %lu\n",
		shim_in, shim_out, shim_dropped, shim_duped, shim_reordered);
	return 0;
usage:
	fprintf(stderr, "usage: udpshim [-s SEED] [-l LOSS] [-d DUP] [-r REORDER] [-D DELAY_MS] "
			"PORT SERVER_PORT\n");
	return 2;
}
