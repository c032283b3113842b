/*
 * mq-activate.c - what systemd does for a socket unit with ListenMessageQueue=, for port: in
 * tests/service/service.sh (systemd-socket-activate makes sockets only): it makes the queue
 * (MessageQueueMaxMessages=8, MessageQueueMessageSize=256, SocketMode=MODE), waits until a
 * message comes to it, then starts the program with the queue as descriptor 3 and
 * LISTEN_FDS=1, LISTEN_PID (the program's) and LISTEN_FDNAMES=NAME in its environment,
 * waits for it and removes the queue (RemoveOnStop=). It keeps the queue open meanwhile,
 * as the manager does.
 *
 *     mq-activate [-m MODE] [-p PIDFILE] /QUEUE NAME PROGRAM [ARG...]
 *
 * Exits with the program's status (128 + the signal that killed it).
 */
#include <fcntl.h>
#include <mqueue.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *mqa_queue;

/* Stopped before the program ran (the test gave up): the queue goes, as RemoveOnStop= has it. */
static void
mqa_on_signal(int sig)
{
	mq_unlink(mqa_queue);
	_exit(128 + sig);
}

int
main(int argc, char **argv)
{
	struct mq_attr attr = { .mq_maxmsg = 8, .mq_msgsize = 256 };
	const char *pidfile = NULL;
	mode_t mode = 0600;
	struct pollfd p;
	char pid[24];
	int opt, status;
	pid_t child;
	mqd_t q;

	while ((opt = getopt(argc, argv, "+m:p:")) != -1) {
		if (opt == 'm')
			mode = (mode_t)strtol(optarg, NULL, 8);
		else if (opt == 'p')
			pidfile = optarg;
		else
			return 2;
	}
	if (argc - optind < 3) {
		fprintf(stderr,
			"usage: mq-activate [-m MODE] [-p PIDFILE] /QUEUE NAME PROGRAM...\n");
		return 2;
	}
	umask(0);
	q = mq_open(argv[optind], O_RDONLY | O_NONBLOCK | O_CREAT | O_EXCL | O_CLOEXEC, mode,
		    &attr);
	if (q == (mqd_t)-1) {
		perror("mq-activate: mq_open");
		return 1;
	}
	mqa_queue = argv[optind];
	signal(SIGTERM, mqa_on_signal);
	signal(SIGINT, mqa_on_signal);
	p.fd = q;
	p.events = POLLIN;
	while (poll(&p, 1, -1) != 1)
		;
	if ((child = fork()) == 0) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		/* dup2 clears close-on-exec, but not when the queue is 3 already. */
		if (q == 3 ? fcntl(3, F_SETFD, 0) != 0 : dup2(q, 3) != 3)
			_exit(127);
		snprintf(pid, sizeof pid, "%ld", (long)getpid());
		setenv("LISTEN_FDS", "1", 1);
		setenv("LISTEN_PID", pid, 1);
		setenv("LISTEN_FDNAMES", argv[optind + 1], 1);
		execvp(argv[optind + 2], argv + optind + 2);
		perror("mq-activate: exec");
		_exit(127);
	}
	if (pidfile != NULL) {
		FILE *f = fopen(pidfile, "w");

		if (f != NULL) {
			fprintf(f, "%ld\n", (long)child);
			fclose(f);
		}
	}
	while (waitpid(child, &status, 0) != child)
		;
	mq_unlink(argv[optind]);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
