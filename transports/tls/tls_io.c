/*
 * tls_io.c - the TLS layer under tcp:'s frames (sock/stream.h's stream_io): recvmsg and
 * sendmsg that read and write plaintext through the connection's SSL object, as the system
 * calls do on the socket (tls_impl.h).
 *
 * OpenSSL reads ciphertext from a buffer of the connection's (t->in) through a BIO of ours;
 * when the buffer is empty the BIO asks for a retry and the receiving op fills it with one
 * recv() on the socket - blocking as tcp:'s receive blocks (the socket's receive timeout),
 * or not - outside the SSL object's lock. OpenSSL writes ciphertext through the same BIO,
 * which sends it at once without waiting and keeps what the socket does not take (the
 * backlog), telling OpenSSL it is written: so no SSL call ever waits, a record once made is
 * never asked for again, and a send that must wait for room does so outside the lock, then
 * sends the backlog before anything else. The lock makes a send and a receive on one
 * connection, which the transport contract allows at once, take turns in the SSL object,
 * never in a wait.
 */
#include <config.h>

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tls_impl.h"

static BIO_METHOD *tls_bio_method;
static pthread_once_t tls_bio_once = PTHREAD_ONCE_INIT;

static int
tls_bio_read(BIO *b, char *buf, size_t n, size_t *got)
{
	struct tls_conn *t = BIO_get_data(b);
	size_t k;

	BIO_clear_retry_flags(b);
	*got = 0;
	if (t->in_len == 0) {
		if (!t->in_eof)
			BIO_set_retry_read(b);
		return 0;
	}
	k = n < t->in_len ? n : t->in_len;
	memcpy(buf, t->in + t->in_off, k);
	t->in_off += k;
	t->in_len -= k;
	if (t->in_len == 0)
		t->in_off = 0;
	*got = k;
	return 1;
}

/* Keeps n bytes at the end of the backlog: at most what is left of one record (and an alert)
 * at a time, so it starts with room for a whole record and does not grow after. */
static int
tls_backlog_put(struct tls_conn *t, const void *p, size_t n)
{
	struct stream_buf b = { &t->bl, t->bl_off, t->bl_len, t->bl_cap };
	int err = idl__stream_buf_put(&b, p, n, TLS_IN_CAP);

	t->bl_off = b.off;
	t->bl_len = b.len;
	t->bl_cap = b.cap;
	return err;
}

/* OpenSSL's output: sent now as far as the socket takes it, the rest kept in order. */
static int
tls_bio_write(BIO *b, const char *buf, size_t n, size_t *put)
{
	struct tls_conn *t = BIO_get_data(b);
	size_t all = n;

	BIO_clear_retry_flags(b);
	*put = 0;
	t->wrote = 1;
	if (t->werr != 0)
		return 0;
	if (t->bl_len == 0) {
		ssize_t k;

		do
			k = idl__sys_send(t->s.fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		while (k < 0 && errno == EINTR);
		if (k < 0 && errno != EAGAIN) {
			t->werr = errno;
			return 0;
		}
		if (k > 0) {
			buf += k;
			n -= (size_t)k;
		}
	}
	if (n != 0 && tls_backlog_put(t, buf, n) != 0) {
		t->werr = ENOMEM;
		return 0;
	}
	*put = all;
	return 1;
}

static long
tls_bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)b;
	(void)num;
	(void)ptr;
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int
tls_bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static void
tls_bio_once_make(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "idlkit tls:");

	if (m != NULL && BIO_meth_set_read_ex(m, tls_bio_read) == 1 &&
	    BIO_meth_set_write_ex(m, tls_bio_write) == 1 &&
	    BIO_meth_set_ctrl(m, tls_bio_ctrl) == 1 && BIO_meth_set_create(m, tls_bio_create) == 1)
		tls_bio_method = m;
	else
		BIO_meth_free(m);
}

int
idl__tls_session(struct tls_conn *t, int server)
{
	SSL_CTX *sctx;
	BIO *bio;
	int err;

	pthread_once(&tls_bio_once, tls_bio_once_make);
	if (tls_bio_method == NULL)
		return idl__fail(IDL_ENOMEM, "tls:%s: cannot make the TLS layer", t->s.name);
	if ((sctx = idl__tls_ctx_ssl(t->ctx, server, &err)) == NULL)
		return err;
	if (!t->lock_made) {
		pthread_mutex_init(&t->lock, NULL);
		t->lock_made = 1;
	}
	t->server = server;
	if ((t->ssl = SSL_new(sctx)) == NULL || (bio = BIO_new(tls_bio_method)) == NULL)
		return idl__fail(IDL_ENOMEM, "tls:%s: out of memory for a TLS session", t->s.name);
	BIO_set_data(bio, t);
	SSL_set_bio(t->ssl, bio, bio);
	SSL_set_app_data(t->ssl, t);
	if (server)
		SSL_set_accept_state(t->ssl);
	else
		SSL_set_connect_state(t->ssl);
	atomic_store(&t->state, TLS_ST_HS);
	return 0;
}

/* Follows the records in the ciphertext that came, so that the end of the stream can be told
 * to fall between two records or inside one. */
static void
tls_records(struct tls_conn *t, const unsigned char *p, size_t n)
{
	while (n > 0) {
		if (t->rec_left != 0) {
			size_t k = n < t->rec_left ? n : t->rec_left;

			t->rec_left -= k;
			p += k;
			n -= k;
			continue;
		}
		t->rhdr[t->rhdr_n++] = *p++;
		n--;
		if (t->rhdr_n == sizeof t->rhdr) {
			t->rec_left = (size_t)t->rhdr[3] << 8 | t->rhdr[4];
			t->rhdr_n = 0;
		}
	}
}

ssize_t
idl__tls_fill(struct tls_conn *t, int flags)
{
	ssize_t r;

	if (t->in == NULL && (t->in = malloc(TLS_IN_CAP)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	/* Only the receiving side fills and moves the buffer; OpenSSL, under the lock, reads
	 * the bytes counted in in_len alone, so the bytes coming in need no lock, the count
	 * does. */
	pthread_mutex_lock(&t->lock);
	if (t->in_len == 0)
		t->in_off = 0;
	else if (t->in_off != 0 && t->in_off + t->in_len == TLS_IN_CAP) {
		memmove(t->in, t->in + t->in_off, t->in_len);
		t->in_off = 0;
	}
	pthread_mutex_unlock(&t->lock);
	do
		r = idl__sys_recv(t->s.fd, t->in + t->in_off + t->in_len,
				  TLS_IN_CAP - t->in_off - t->in_len, flags & MSG_DONTWAIT);
	while (r < 0 && errno == EINTR && (flags & MSG_DONTWAIT));
	if (r > 0) {
		tls_records(t, t->in + t->in_off + t->in_len, (size_t)r);
		pthread_mutex_lock(&t->lock);
		t->in_len += (size_t)r;
		pthread_mutex_unlock(&t->lock);
	} else if (r == 0) {
		t->in_eof = 1;
	}
	return r;
}

void
idl__tls_trim(struct tls_conn *t)
{
	if (t->in != NULL && t->in_len == 0) {
		free(t->in);
		t->in = NULL;
		t->in_off = 0;
	}
	if (t->bl != NULL && t->bl_len == 0) {
		free(t->bl);
		t->bl = NULL;
		t->bl_cap = t->bl_off = 0;
	}
}

int
idl__tls_flush(struct tls_conn *t)
{
	while (t->bl_len != 0) {
		ssize_t k = idl__sys_send(t->s.fd, t->bl + t->bl_off, t->bl_len,
					  MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k > 0) {
			t->bl_off += (size_t)k;
			t->bl_len -= (size_t)k;
		} else if (k < 0 && errno == EINTR) {
			continue;
		} else if (k < 0 && errno == EAGAIN) {
			return 1;
		} else {
			t->werr = k < 0 ? errno : EPIPE;
			return -1;
		}
	}
	return 0;
}

/* Waits until fd is ready for `events` within `us` microseconds (0: no limit): 1 when it is,
 * 0 when the time passed. */
static int
tls_wait(int fd, short events, int64_t us)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r;

	do
		r = poll(&p, 1, us == 0 ? -1 : (int)((us + 999) / 1000));
	while (r < 0 && errno == EINTR);
	return r != 0;
}

/* The layer has failed (a handshake or a record): its error stands for every later op. */
static ssize_t
tls_io_failed(void)
{
	errno = EPROTO;
	return -1;
}

/*
 * Plaintext into the pieces of mh: what the session has decrypted, else what the next records
 * bring, waiting for them as recvmsg(2) would (MSG_DONTWAIT, or the socket's receive timeout).
 */
static ssize_t
tls_recvmsg(struct stream_conn *s, struct msghdr *mh, int flags)
{
	struct tls_conn *t = (struct tls_conn *)s;

	for (;;) {
		size_t got = 0;
		int e = SSL_ERROR_NONE, err = 0;
		ssize_t r;

		if (atomic_load(&t->state) == TLS_ST_FAILED)
			return tls_io_failed();
		pthread_mutex_lock(&t->lock);
		ERR_clear_error();
		for (size_t i = 0; i < (size_t)mh->msg_iovlen && e == SSL_ERROR_NONE; i++) {
			unsigned char *p = mh->msg_iov[i].iov_base;
			size_t off = 0, k;

			while (off < mh->msg_iov[i].iov_len) {
				if (SSL_read_ex(t->ssl, p + off, mh->msg_iov[i].iov_len - off,
						&k) != 1) {
					e = SSL_get_error(t->ssl, 0);
					break;
				}
				off += k;
				got += k;
			}
		}
		/* A send of OpenSSL's that failed (werr) is the peer gone, not TLS's failure. */
		if (got == 0 && e != SSL_ERROR_WANT_READ && e != SSL_ERROR_ZERO_RETURN &&
		    e != SSL_ERROR_NONE && !(e == SSL_ERROR_SYSCALL && t->werr != 0))
			err = idl__tls_ssl_error(t, e);
		/* A reply to the peer (an alert, a key update) waits in the backlog for the
		 * next send; try it now. */
		if (t->bl_len != 0)
			(void)idl__tls_flush(t);
		pthread_mutex_unlock(&t->lock);
		if (got > 0)
			return (ssize_t)got;
		if (e == SSL_ERROR_ZERO_RETURN)
			return 0; /* the peer's close_notify */
		if (e == SSL_ERROR_SYSCALL && t->werr != 0) {
			errno = t->werr;
			return -1;
		}
		if (err != 0)
			return tls_io_failed();
		/* The session wants records: the socket's next bytes. */
		r = idl__tls_fill(t, flags);
		if (r > 0)
			continue;
		if (r < 0)
			return -1;
		/* The end of the stream: between two records it is the peer's end, as on tcp:;
		 * inside one, the stream was cut. */
		if (t->rhdr_n == 0 && t->rec_left == 0)
			return 0;
		pthread_mutex_lock(&t->lock);
		idl__tls_failed(t, IDL_EINTEGRITY,
				"tls:%s: the stream was cut in the middle of a TLS record",
				t->s.name);
		pthread_mutex_unlock(&t->lock);
		return tls_io_failed();
	}
}

/* One record's plaintext from the pieces at (*i, *off) onward: a long piece's next 16 KiB in
 * place, or small pieces gathered into stage. Sets *p and returns its length (0: none left). */
static size_t
tls_next_record(const struct msghdr *mh, size_t *i, size_t *off, unsigned char *stage,
		const unsigned char **p)
{
	size_t n = 0;

	while (*i < (size_t)mh->msg_iovlen && mh->msg_iov[*i].iov_len == *off) {
		(*i)++;
		*off = 0;
	}
	if (*i == (size_t)mh->msg_iovlen)
		return 0;
	if (mh->msg_iov[*i].iov_len - *off >= TLS_STAGE) {
		size_t k = mh->msg_iov[*i].iov_len - *off;

		*p = (const unsigned char *)mh->msg_iov[*i].iov_base + *off;
		k = k < SSL3_RT_MAX_PLAIN_LENGTH ? k : SSL3_RT_MAX_PLAIN_LENGTH;
		*off += k;
		return k;
	}
	for (; *i < (size_t)mh->msg_iovlen && n < TLS_STAGE; (*i)++, *off = 0) {
		size_t k = mh->msg_iov[*i].iov_len - *off;

		if (k >= TLS_STAGE && n != 0)
			break;
		k = k < TLS_STAGE - n ? k : TLS_STAGE - n;
		memcpy(stage + n, (const unsigned char *)mh->msg_iov[*i].iov_base + *off, k);
		n += k;
		if (*off + k < mh->msg_iov[*i].iov_len) {
			*off += k;
			break;
		}
	}
	*p = stage;
	return n;
}

/*
 * The pieces of mh as records: each taken once OpenSSL made it (its ciphertext sent or kept
 * in the backlog). Before a record is made the backlog must be out: without MSG_DONTWAIT
 * the wait for room is bounded by the socket's send timeout, as sendmsg(2)'s is.
 */
static ssize_t
tls_sendmsg(struct stream_conn *s, const struct msghdr *mh, int flags)
{
	struct tls_conn *t = (struct tls_conn *)s;
	unsigned char stage[TLS_STAGE];
	size_t i = 0, off = 0, taken = 0;

	for (;;) {
		const unsigned char *p;
		size_t n, w;
		int fl, e;

		if (atomic_load(&t->state) == TLS_ST_FAILED)
			return tls_io_failed();
		pthread_mutex_lock(&t->lock);
		fl = idl__tls_flush(t);
		if (fl != 0) {
			pthread_mutex_unlock(&t->lock);
			if (fl < 0 || taken != 0 || (flags & MSG_DONTWAIT)) {
				if (fl < 0)
					errno = t->werr;
				else if (taken == 0)
					errno = EAGAIN;
				return fl < 0 || taken == 0 ? -1 : (ssize_t)taken;
			}
			if (!tls_wait(t->s.fd, POLLOUT, t->s.sndtimeo_us)) {
				errno = EAGAIN;
				return -1;
			}
			continue;
		}
		{
			size_t si = i, so = off;

			if ((n = tls_next_record(mh, &si, &so, stage, &p)) == 0) {
				pthread_mutex_unlock(&t->lock);
				return (ssize_t)taken;
			}
			ERR_clear_error();
			if (SSL_write_ex(t->ssl, p, n, &w) != 1) {
				e = SSL_get_error(t->ssl, 0);
				if (t->werr == 0)
					(void)idl__tls_ssl_error(t, e);
				pthread_mutex_unlock(&t->lock);
				if (t->werr != 0) {
					errno = t->werr;
					return taken != 0 ? (ssize_t)taken : -1;
				}
				return tls_io_failed();
			}
			i = si;
			off = so;
		}
		pthread_mutex_unlock(&t->lock);
		/* One record of at most 16 KiB is written whole (SSL_MODE_ENABLE_PARTIAL_WRITE
		 * returns after each record): w is n. */
		taken += w;
	}
}

/* The layer's own error after a failed op: what made it FAILED. */
static int
tls_io_err(struct stream_conn *s, int e)
{
	struct tls_conn *t = (struct tls_conn *)s;

	(void)e;
	if (atomic_load(&t->state) != TLS_ST_FAILED)
		return 0;
	return idl__fail(t->err, "%s", t->why);
}

const struct stream_io idl__tls_io = {
	.scheme = "tls",
	.recvmsg = tls_recvmsg,
	.sendmsg = tls_sendmsg,
	.err = tls_io_err,
};
