/*
 * capnp_peer.cc - idlbench's Cap'n Proto peer: bench.capnp's Bench interface served and called
 * with Cap'n Proto RPC over a two-party connection (capnp::TwoPartyServer and TwoPartyClient on
 * kj::setupAsyncIo's event loop), over a UNIX socket and TCP: the columns capnp-unix and
 * capnp-tcp. peer.h states the command line.
 *
 * The server's Bench is the connection's bootstrap capability; the client asks for it once
 * and calls it. A call builds its request in the message's segments (the caller's bytes
 * copied into a Data field; the ool and big rows give a size hint so that the request is one
 * segment), sends it and waits for the answer with .wait(), whose fields the client reads in
 * place in the received segments. --inflight N keeps N calls outstanding instead, each
 * answer starting the next call. Every call is joined with a kj timer of --timeout-ms.
 *
 * kj's event loop runs in the calling thread and starts none: both sides are one thread.
 */
#include <config.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <capnp/common.h>
#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>
#include <kj/async-unix.h>
#include <kj/debug.h>

#include "bench.capnp.h"
#include "peer.h"

namespace
{

void
capnp_peer_version(char *buf, size_t len)
{
	snprintf(buf, len, "capnp %d.%d.%d", CAPNP_VERSION_MAJOR, CAPNP_VERSION_MINOR,
		 CAPNP_VERSION_MICRO);
}

const peer_info capnp_info = { "capnp", "unix tcp", capnp_peer_version };

/* The marks of our own failures in a kj::Exception's description. */
const char bad_data_mark[] = "bench.BadData";
const char timeout_mark[] = "bench.Timeout";

/* kj's names for an address: "unix:PATH", "HOST:PORT". */
kj::String
capnp_target(const peer_addr &a)
{
	if (!a.tcp)
		return kj::str("unix:", a.path);
	return kj::str(a.host, ":", a.port);
}

kj::ArrayPtr<const kj::byte>
bytes_of(const void *p, size_t n)
{
	return kj::arrayPtr(static_cast<const kj::byte *>(p), n);
}

/* A request's size hint: its bytes in words, and room for the pointers around them. */
capnp::MessageSize
hint_for(size_t bytes)
{
	return capnp::MessageSize{ bytes / 8 + 16, 0 };
}

/* ---- The server ---- */

class BenchImpl final : public idlbench::Bench::Server
{
public:
	explicit BenchImpl(int wrong) : wrong_(wrong)
	{
	}

protected:
	kj::Promise<void> null(NullContext) override
	{
		return kj::READY_NOW;
	}

	kj::Promise<void> add(AddContext c) override
	{
		auto p = c.getParams();

		c.getResults().setSum(peer_srv_add(wrong_, p.getA(), p.getB()));
		return kj::READY_NOW;
	}

	kj::Promise<void> bigin(BiginContext c) override
	{
		return check(c.getParams().getData(), peer_salt_in, "bigin");
	}

	kj::Promise<void> bigout(BigoutContext c) override
	{
		fill(c.getResults(hint_for(PEER_BIG)).initData(PEER_BIG), PEER_BIGOUT,
		     peer_salt_out);
		return kj::READY_NOW;
	}

	kj::Promise<void> biginout(BiginoutContext c) override
	{
		if (peer_srv_check(c.getParams().getData().begin(), c.getParams().getData().size(),
				   peer_salt_inout_in) != 0)
			return bad_data("biginout: not the 200 bytes of the pattern");
		fill(c.getResults(hint_for(PEER_BIG)).initData(PEER_BIG), PEER_BIGINOUT,
		     peer_salt_inout_out);
		return kj::READY_NOW;
	}

	kj::Promise<void> ool64k(Ool64kContext c) override
	{
		uint64_t sum;

		if (ool(PEER_OOL64K, c.getParams().getData(), &sum) != 0)
			return bad_data(wrong_size(PEER_OOL64K, c.getParams().getData().size()));
		c.getResults().setSum(sum);
		return kj::READY_NOW;
	}

	kj::Promise<void> ool1m(Ool1mContext c) override
	{
		uint64_t sum;

		if (ool(PEER_OOL1M, c.getParams().getData(), &sum) != 0)
			return bad_data(wrong_size(PEER_OOL1M, c.getParams().getData().size()));
		c.getResults().setSum(sum);
		return kj::READY_NOW;
	}

private:
	/* A refusal the client can tell from a broken connection: FAILED, with our mark. */
	static kj::Promise<void> bad_data(kj::StringPtr what)
	{
		return kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__,
				     kj::str(bad_data_mark, ": ", what));
	}

	static kj::String wrong_size(peer_row_id row, size_t got)
	{
		return kj::str(peer_rows[row].name, ": ", got, " bytes, expected ",
			       peer_rows[row].payload);
	}

	static kj::Promise<void> check(capnp::Data::Reader data, unsigned salt, const char *row)
	{
		if (peer_srv_check(data.begin(), data.size(), salt) != 0)
			return bad_data(kj::str(row, ": not the 200 bytes of the pattern"));
		return kj::READY_NOW;
	}

	void fill(capnp::Data::Builder out, peer_row_id row, unsigned salt) const
	{
		peer_srv_fill(wrong_, row, out.begin(), salt);
	}

	int ool(peer_row_id row, capnp::Data::Reader data, uint64_t *sum) const
	{
		return peer_srv_ool(wrong_, row, data.begin(), data.size(), sum);
	}

	int wrong_;
};

int
capnp_serve(const peer_args &a)
{
	/* Before the event port exists: kj takes these signals through it from now on. */
	kj::UnixEventPort::captureSignal(SIGTERM);
	kj::UnixEventPort::captureSignal(SIGINT);
	auto io = kj::setupAsyncIo();
	peer_addr bound = a.addr;
	kj::Own<kj::ConnectionReceiver> listener;

	KJ_IF_MAYBE (e, kj::runCatchingExceptions([&]() {
			     auto addr = io.provider->getNetwork()
						 .parseAddress(capnp_target(a.addr))
						 .wait(io.waitScope);
			     listener = addr->listen();
		     })) {
		peer_err(&capnp_info, "cannot serve on %s: %s", capnp_target(a.addr).cStr(),
			 e->getDescription().cStr());
		return PEER_EXIT_FAILED;
	}
	if (a.addr.tcp)
		bound.port = listener->getPort();
	capnp::TwoPartyServer server(kj::heap<BenchImpl>(a.wrong));
	auto listening = server.listen(*listener);
	auto stop = io.unixEventPort.onSignal(SIGTERM)
			    .exclusiveJoin(io.unixEventPort.onSignal(SIGINT))
			    .ignoreResult();

	peer_ready(&bound);
	int status = PEER_EXIT_OK;
	KJ_IF_MAYBE (e, kj::runCatchingExceptions([&]() {
			     listening.exclusiveJoin(kj::mv(stop)).wait(io.waitScope);
		     })) {
		peer_err(&capnp_info, "serving: %s", e->getDescription().cStr());
		status = PEER_EXIT_FAILED;
	}
	if (!a.addr.tcp)
		unlink(a.addr.path);
	return status;
}

/* ---- The client ---- */

class Client
{
public:
	Client(kj::AsyncIoContext &io, const peer_args &a, const peer_data &d)
	    : io_(io), a_(a), d_(d)
	{
	}

	int connect();
	int calls(unsigned long first, unsigned long n);

private:
	template <typename T> kj::Promise<T> deadline(kj::Promise<T> p);
	kj::Promise<void> one(unsigned long i);
	kj::Promise<void> lane(unsigned long *next, unsigned long end);
	kj::Exception wrong(unsigned long i, kj::StringPtr what);
	int failed(const kj::Exception &e);

	kj::AsyncIoContext &io_;
	const peer_args &a_;
	const peer_data &d_;
	kj::Own<kj::AsyncIoStream> stream_;
	kj::Own<capnp::TwoPartyClient> rpc_;
	kj::Maybe<idlbench::Bench::Client> cap_;
	/* The call that failed first: which, and why (its message is already printed). */
	int status_ = PEER_EXIT_OK;
	unsigned long failed_i_ = 0;
};

/* p, or a timeout failure once --timeout-ms has passed. */
template <typename T>
kj::Promise<T>
Client::deadline(kj::Promise<T> p)
{
	return p.exclusiveJoin(io_.provider->getTimer()
				       .afterDelay(a_.timeout_ms * kj::MILLISECONDS)
				       .then([]() -> kj::Promise<T> {
					       return kj::Exception(kj::Exception::Type::OVERLOADED,
								    __FILE__, __LINE__,
								    kj::str(timeout_mark));
				       }));
}

int
Client::connect()
{
	KJ_IF_MAYBE (e, kj::runCatchingExceptions([&]() {
			     auto addr = io_.provider->getNetwork()
						 .parseAddress(capnp_target(a_.addr))
						 .wait(io_.waitScope);
			     stream_ = deadline(addr->connect()).wait(io_.waitScope);
		     })) {
		bool timeout = strstr(e->getDescription().cStr(), timeout_mark) != nullptr;

		peer_err(&capnp_info, "cannot connect to %s: %s", capnp_target(a_.addr).cStr(),
			 timeout ? "no answer in time" : e->getDescription().cStr());
		return timeout ? PEER_EXIT_TIMEOUT : PEER_EXIT_FAILED;
	}
	rpc_ = kj::heap<capnp::TwoPartyClient>(*stream_);
	cap_ = rpc_->bootstrap().castAs<idlbench::Bench>();
	return PEER_EXIT_OK;
}

/* A wrong answer: printed, remembered, and thrown to end the calls. */
kj::Exception
Client::wrong(unsigned long i, kj::StringPtr what)
{
	peer_err(&capnp_info, "%s call %lu: %s", peer_rows[a_.row].name, i, what.cStr());
	if (status_ == PEER_EXIT_OK) {
		status_ = PEER_EXIT_WRONG;
		failed_i_ = i;
	}
	return kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::str(what));
}

/* Call i of the row, its answer checked. */
kj::Promise<void>
Client::one(unsigned long i)
{
	idlbench::Bench::Client &cap = KJ_ASSERT_NONNULL(cap_);

	switch (a_.row) {
	case PEER_NULL:
		return deadline(cap.nullRequest().send().ignoreResult());
	case PEER_ADD: {
		auto req = cap.addRequest();

		req.setA((int32_t)(uint32_t)i);
		req.setB(1);
		return deadline(req.send().then([this, i](auto r) -> kj::Promise<void> {
			int32_t want = (int32_t)(uint32_t)(i + 1u);

			if (r.getSum() != want)
				return wrong(i, kj::str("wrong answer ", r.getSum(), ", expected ",
							want));
			return kj::READY_NOW;
		}));
	}
	case PEER_BIGIN: {
		auto req = cap.biginRequest(hint_for(PEER_BIG));

		req.setData(bytes_of(d_.in, PEER_BIG));
		return deadline(req.send().ignoreResult());
	}
	case PEER_BIGOUT:
	case PEER_BIGINOUT: {
		auto check = [this, i](capnp::Data::Reader got, const char *want) {
			if (got.size() != PEER_BIG || memcmp(got.begin(), want, PEER_BIG) != 0)
				return kj::Promise<void>(
					wrong(i, kj::str("wrong answer (", got.size(),
							 " bytes, not the pattern)")));
			return kj::Promise<void>(kj::READY_NOW);
		};
		if (a_.row == PEER_BIGOUT)
			return deadline(cap.bigoutRequest().send().then(
				[this, check](auto r) { return check(r.getData(), d_.out); }));
		auto req = cap.biginoutRequest(hint_for(PEER_BIG));

		req.setData(bytes_of(d_.inout, PEER_BIG));
		return deadline(req.send().then(
			[this, check](auto r) { return check(r.getData(), d_.inout_out); }));
	}
	default: {
		auto check = [this, i](uint64_t sum) {
			if (sum != d_.ool_sum)
				return kj::Promise<void>(
					wrong(i, kj::str("wrong checksum ", sum, ", expected ",
							 d_.ool_sum)));
			return kj::Promise<void>(kj::READY_NOW);
		};
		if (a_.row == PEER_OOL64K) {
			auto req = cap.ool64kRequest(hint_for(d_.ool_len));

			req.setData(bytes_of(d_.ool, d_.ool_len));
			return deadline(
				req.send().then([check](auto r) { return check(r.getSum()); }));
		}
		auto req = cap.ool1mRequest(hint_for(d_.ool_len));

		req.setData(bytes_of(d_.ool, d_.ool_len));
		return deadline(req.send().then([check](auto r) { return check(r.getSum()); }));
	}
	}
}

/* One of --inflight lanes: calls the next number until end, one after the other. */
kj::Promise<void>
Client::lane(unsigned long *next, unsigned long end)
{
	if (*next >= end)
		return kj::READY_NOW;
	unsigned long i = (*next)++;

	return one(i).then([this, next, end]() { return lane(next, end); },
			   [this, i](kj::Exception &&e) -> kj::Promise<void> {
				   if (status_ == PEER_EXIT_OK)
					   failed_i_ = i;
				   return kj::mv(e);
			   });
}

int
Client::failed(const kj::Exception &e)
{
	const char *row = peer_rows[a_.row].name;
	const char *why = e.getDescription().cStr();

	if (status_ != PEER_EXIT_OK)
		return status_;
	if (strstr(why, timeout_mark) != nullptr) {
		peer_err(&capnp_info, "%s call %lu: timed out after %u ms", row, failed_i_,
			 a_.timeout_ms);
		return PEER_EXIT_TIMEOUT;
	}
	if (strstr(why, bad_data_mark) != nullptr) {
		peer_err(&capnp_info, "%s call %lu: the server refused the data: %s", row,
			 failed_i_, why);
		return PEER_EXIT_WRONG;
	}
	peer_err(&capnp_info, "%s call %lu: %s", row, failed_i_, why);
	return PEER_EXIT_FAILED;
}

int
Client::calls(unsigned long first, unsigned long n)
{
	unsigned long next = first, end = first + n;

	KJ_IF_MAYBE (e, kj::runCatchingExceptions([&]() {
			     if (a_.inflight > 1) {
				     auto lanes =
					     kj::heapArrayBuilder<kj::Promise<void>>(a_.inflight);

				     for (unsigned k = 0; k < a_.inflight; k++)
					     lanes.add(lane(&next, end));
				     kj::joinPromises(lanes.finish()).wait(io_.waitScope);
				     return;
			     }
			     for (; next < end; next++) {
				     failed_i_ = next;
				     one(next).wait(io_.waitScope);
			     }
		     })) {
		return failed(*e);
	}
	return PEER_EXIT_OK;
}

int
capnp_call(const peer_args &a)
{
	peer_data d;

	if (peer_data_init(&d, a.row, a.corrupt) != 0) {
		peer_err(&capnp_info, "out of memory");
		return PEER_EXIT_FAILED;
	}
	int status;
	{
		auto io = kj::setupAsyncIo();
		Client c(io, a, d);
		unsigned long next = a.warmup;

		status = c.connect();
		if (status == PEER_EXIT_OK)
			status = c.calls(0, a.warmup);
		for (unsigned long k = 0; status == PEER_EXIT_OK && k < a.reps; k++) {
			double t0 = peer_now_ns();

			status = c.calls(next, a.iterations);
			if (status == PEER_EXIT_OK)
				peer_report(k, (peer_now_ns() - t0) / (double)a.iterations);
			next += a.iterations;
		}
	}
	peer_data_fini(&d);
	return status;
}

} // namespace

int
main(int argc, char **argv)
{
	peer_args a;

	if (peer_parse(argc, argv, &capnp_info, &a) != 0)
		return PEER_EXIT_USAGE;
	if (a.cmd == PEER_CMD_SERVE) {
		peer_setup_server();
		return capnp_serve(a);
	}
	if (a.cmd == PEER_CMD_CALL) {
		peer_setup_client();
		return capnp_call(a);
	}
	return PEER_EXIT_OK;
}
