/*
 * grpc_peer.cc - idlbench's gRPC peer: bench.proto's service served and called with gRPC C++
 * (synchronous unary calls) over a UNIX socket, TCP and TLS, the columns grpc-unix, grpc-tcp
 * and grpc-tls. peer.h states the command line.
 *
 * TLS is gRPC's own (its SSL credentials) with idlkit's tls: certificates, the PEM files that
 * IDL_TLS_CERT, IDL_TLS_KEY and IDL_TLS_CA name (idlbench makes throwaway ones when none are
 * set and its children inherit them), and both sides authenticated as idlkit's tls: does:
 * the server requires and verifies the client's certificate against the CA, and the client
 * presents the same certificate and verifies the server's.
 *
 * A call is what a user of the synchronous API writes: a ClientContext with a deadline, the
 * request message filled (the caller's bytes copied into its `bytes` field, as the other
 * peers copy them into their messages), the stub's method, the status and the reply checked.
 * Underneath, gRPC frames the protobuf message in HTTP/2 (HEADERS and DATA frames, HPACK,
 * flow-control windows) on one connection. --inflight N uses the asynchronous stub instead,
 * N calls outstanding on one completion queue.
 *
 * gRPC starts threads of its own on both sides (its executor, timer manager and, in the
 * server, the synchronous server's polling threads); this program starts none. The server
 * blocks SIGTERM and SIGINT before gRPC starts any, so that they reach sigwait() in main.
 */
#include <config.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <signal.h>
#include <sstream>
#include <stdio.h>
#include <stdlib.h>
#include <string>
#include <string.h>
#include <unistd.h>

#include <google/protobuf/stubs/common.h>
#include <grpcpp/grpcpp.h>

#include "bench.grpc.pb.h"
#include "peer.h"

namespace
{

void
grpc_peer_version(char *buf, size_t len)
{
	snprintf(buf, len, "grpc %s protobuf %s", grpc::Version().c_str(),
		 google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION).c_str());
}

const peer_info grpc_info = { "grpc", "unix tcp tls", grpc_peer_version };

/* gRPC's names for an address: "unix:PATH" both ways; for TCP, "HOST:PORT" to listen on and
 * "ipv4:HOST:PORT" to call, which takes the address as it is, without a resolver. */
std::string
grpc_target(const peer_addr &a, bool listen)
{
	if (!a.tcp)
		return std::string("unix:") + a.path;
	return std::string(listen ? "" : "ipv4:") + a.host + ":" + std::to_string(a.port);
}

/* The PEM text of the file that the variable var names; false after saying why. */
bool
grpc_pem(const char *var, std::string *out)
{
	const char *path = getenv(var);

	if (path == NULL || *path == '\0') {
		peer_err(&grpc_info,
			 "tls: %s is not set (tls: takes its certificate, key and CA from the PEM "
			 "files that IDL_TLS_CERT, IDL_TLS_KEY and IDL_TLS_CA name)",
			 var);
		return false;
	}
	std::ifstream f(path, std::ios::binary);
	std::ostringstream text;

	text << f.rdbuf();
	if (!f || text.str().empty()) {
		peer_err(&grpc_info, "tls: %s=%s: cannot read it", var, path);
		return false;
	}
	*out = text.str();
	return true;
}

/* The certificate, its key and the CA of a tls: address, both sides the same. */
struct TlsFiles {
	std::string cert, key, ca;

	bool read()
	{
		return grpc_pem("IDL_TLS_CERT", &cert) && grpc_pem("IDL_TLS_KEY", &key) &&
		       grpc_pem("IDL_TLS_CA", &ca);
	}
};

/* ---- The server ---- */

class BenchService final : public idlbench::Bench::Service
{
public:
	explicit BenchService(int wrong) : wrong_(wrong)
	{
	}

	grpc::Status Null(grpc::ServerContext *, const idlbench::Empty *,
			  idlbench::Empty *) override
	{
		return grpc::Status::OK;
	}

	grpc::Status Add(grpc::ServerContext *, const idlbench::AddRequest *req,
			 idlbench::AddReply *rep) override
	{
		rep->set_sum(peer_srv_add(wrong_, req->a(), req->b()));
		return grpc::Status::OK;
	}

	grpc::Status BigIn(grpc::ServerContext *, const idlbench::Big *req,
			   idlbench::Empty *) override
	{
		return check(req->data(), peer_salt_in, "bigin");
	}

	grpc::Status BigOut(grpc::ServerContext *, const idlbench::Empty *,
			    idlbench::Big *rep) override
	{
		fill(rep, PEER_BIGOUT, peer_salt_out);
		return grpc::Status::OK;
	}

	grpc::Status BigInOut(grpc::ServerContext *, const idlbench::Big *req,
			      idlbench::Big *rep) override
	{
		grpc::Status s = check(req->data(), peer_salt_inout_in, "biginout");

		if (s.ok())
			fill(rep, PEER_BIGINOUT, peer_salt_inout_out);
		return s;
	}

	grpc::Status Ool64k(grpc::ServerContext *, const idlbench::Ool *req,
			    idlbench::OolSum *rep) override
	{
		return ool(PEER_OOL64K, req, rep);
	}

	grpc::Status Ool1m(grpc::ServerContext *, const idlbench::Ool *req,
			   idlbench::OolSum *rep) override
	{
		return ool(PEER_OOL1M, req, rep);
	}

private:
	static grpc::Status check(const std::string &data, unsigned salt, const char *row)
	{
		if (peer_srv_check(data.data(), data.size(), salt) != 0)
			return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
					    std::string(row) +
						    ": not the 200 bytes of the pattern");
		return grpc::Status::OK;
	}

	void fill(idlbench::Big *rep, peer_row_id row, unsigned salt) const
	{
		std::string *out = rep->mutable_data();

		out->resize(PEER_BIG);
		peer_srv_fill(wrong_, row, &(*out)[0], salt);
	}

	grpc::Status ool(peer_row_id row, const idlbench::Ool *req, idlbench::OolSum *rep) const
	{
		uint64_t sum;

		if (peer_srv_ool(wrong_, row, req->data().data(), req->data().size(), &sum) != 0)
			return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
					    std::string(peer_rows[row].name) + ": " +
						    std::to_string(req->data().size()) +
						    " bytes, expected " +
						    std::to_string(peer_rows[row].payload));
		rep->set_sum(sum);
		return grpc::Status::OK;
	}

	int wrong_;
};

int
grpc_peer_serve(const peer_args &a)
{
	BenchService service(a.wrong);
	grpc::ServerBuilder builder;
	int port = 0;
	peer_addr bound = a.addr;
	sigset_t set;
	int sig = 0;
	std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();

	if (a.addr.tls) {
		TlsFiles tls;
		grpc::SslServerCredentialsOptions opts(
			GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);

		if (!tls.read())
			return PEER_EXIT_FAILED;
		opts.pem_root_certs = tls.ca;
		opts.pem_key_cert_pairs.push_back({ tls.key, tls.cert });
		creds = grpc::SslServerCredentials(opts);
	}
	builder.AddListeningPort(grpc_target(a.addr, true), creds, a.addr.tcp ? &port : nullptr);
	builder.RegisterService(&service);
	std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
	if (!server || (a.addr.tcp && port == 0)) {
		peer_err(&grpc_info, "cannot serve on %s", grpc_target(a.addr, true).c_str());
		return PEER_EXIT_FAILED;
	}
	if (a.addr.tcp)
		bound.port = (unsigned)port;
	peer_ready(&bound);
	/* Blocked in every thread since peer_setup_server(): only this wait takes them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigwait(&set, &sig);
	server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
	server->Wait();
	if (!a.addr.tcp)
		unlink(a.addr.path);
	return PEER_EXIT_OK;
}

/* ---- The client ---- */

/* One call's context, status and answer (one per call in flight). */
struct Slot {
	std::unique_ptr<grpc::ClientContext> ctx;
	grpc::Status status;
	unsigned long i = 0;
	idlbench::Empty empty;
	idlbench::AddReply sum;
	idlbench::Big big;
	idlbench::OolSum osum;
	std::unique_ptr<grpc::ClientAsyncResponseReader<idlbench::Empty>> r_empty;
	std::unique_ptr<grpc::ClientAsyncResponseReader<idlbench::AddReply>> r_sum;
	std::unique_ptr<grpc::ClientAsyncResponseReader<idlbench::Big>> r_big;
	std::unique_ptr<grpc::ClientAsyncResponseReader<idlbench::OolSum>> r_osum;
};

class Client
{
public:
	Client(const peer_args &a, const peer_data &d) : a_(a), d_(d)
	{
	}

	/* Every call has completed by now (pipeline() waits for them): drain the queue's
	 * shutdown, as gRPC requires before it is destroyed. */
	~Client()
	{
		void *tag;
		bool ok;

		cq_.Shutdown();
		while (cq_.Next(&tag, &ok))
			;
	}

	int connect();
	int calls(unsigned long first, unsigned long n);

private:
	void start_context(Slot &s, unsigned long i);
	void fill_request(unsigned long i);
	int call(Slot &s, unsigned long i);
	void start(Slot &s, unsigned long i);
	int pipeline(unsigned long first, unsigned long n);
	int failed(const Slot &s);
	int check(const Slot &s);

	const peer_args &a_;
	const peer_data &d_;
	std::shared_ptr<grpc::Channel> channel_;
	std::unique_ptr<idlbench::Bench::Stub> stub_;
	grpc::CompletionQueue cq_;
	/* The requests, filled before each call (a call serializes its request at once). */
	idlbench::Empty empty_;
	idlbench::AddRequest add_;
	idlbench::Big big_;
	idlbench::Ool ool_;
};

int
Client::connect()
{
	auto deadline = std::chrono::system_clock::now() + std::chrono::milliseconds(a_.timeout_ms);
	std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();

	if (a_.addr.tls) {
		TlsFiles tls;
		grpc::SslCredentialsOptions opts;

		if (!tls.read())
			return PEER_EXIT_FAILED;
		opts.pem_root_certs = tls.ca;
		opts.pem_private_key = tls.key;
		opts.pem_cert_chain = tls.cert;
		creds = grpc::SslCredentials(opts);
	}
	channel_ = grpc::CreateChannel(grpc_target(a_.addr, false), creds);
	stub_ = idlbench::Bench::NewStub(channel_);
	if (channel_->WaitForConnected(deadline))
		return PEER_EXIT_OK;
	/* Still connecting: nobody answered in time; in failure: nobody there. */
	bool trying = channel_->GetState(false) == GRPC_CHANNEL_CONNECTING;
	peer_err(&grpc_info, "cannot connect to %s within %u ms%s",
		 grpc_target(a_.addr, false).c_str(), a_.timeout_ms,
		 trying ? ": no answer" : ": refused");
	return trying ? PEER_EXIT_TIMEOUT : PEER_EXIT_FAILED;
}

void
Client::start_context(Slot &s, unsigned long i)
{
	s.ctx = std::make_unique<grpc::ClientContext>();
	s.ctx->set_deadline(std::chrono::system_clock::now() +
			    std::chrono::milliseconds(a_.timeout_ms));
	s.i = i;
}

void
Client::fill_request(unsigned long i)
{
	switch (a_.row) {
	case PEER_ADD:
		add_.set_a((int32_t)(uint32_t)i);
		add_.set_b(1);
		break;
	case PEER_BIGIN:
		big_.set_data(d_.in, PEER_BIG);
		break;
	case PEER_BIGINOUT:
		big_.set_data(d_.inout, PEER_BIG);
		break;
	case PEER_OOL64K:
	case PEER_OOL1M:
		ool_.set_data(d_.ool, d_.ool_len);
		break;
	default:
		break;
	}
}

/* One synchronous call. */
int
Client::call(Slot &s, unsigned long i)
{
	idlbench::Bench::Stub *st = stub_.get();
	grpc::ClientContext *c;

	start_context(s, i);
	fill_request(i);
	c = s.ctx.get();
	switch (a_.row) {
	case PEER_NULL:
		s.status = st->Null(c, empty_, &s.empty);
		break;
	case PEER_ADD:
		s.status = st->Add(c, add_, &s.sum);
		break;
	case PEER_BIGIN:
		s.status = st->BigIn(c, big_, &s.empty);
		break;
	case PEER_BIGOUT:
		s.status = st->BigOut(c, empty_, &s.big);
		break;
	case PEER_BIGINOUT:
		s.status = st->BigInOut(c, big_, &s.big);
		break;
	case PEER_OOL64K:
		s.status = st->Ool64k(c, ool_, &s.osum);
		break;
	default:
		s.status = st->Ool1m(c, ool_, &s.osum);
		break;
	}
	return s.status.ok() ? check(s) : failed(s);
}

/* Starts one asynchronous call on the completion queue; its tag is the slot. */
void
Client::start(Slot &s, unsigned long i)
{
	idlbench::Bench::Stub *st = stub_.get();
	grpc::ClientContext *c;

	start_context(s, i);
	fill_request(i);
	c = s.ctx.get();
	switch (a_.row) {
	case PEER_NULL:
		s.r_empty = st->AsyncNull(c, empty_, &cq_);
		s.r_empty->Finish(&s.empty, &s.status, &s);
		break;
	case PEER_ADD:
		s.r_sum = st->AsyncAdd(c, add_, &cq_);
		s.r_sum->Finish(&s.sum, &s.status, &s);
		break;
	case PEER_BIGIN:
		s.r_empty = st->AsyncBigIn(c, big_, &cq_);
		s.r_empty->Finish(&s.empty, &s.status, &s);
		break;
	case PEER_BIGOUT:
		s.r_big = st->AsyncBigOut(c, empty_, &cq_);
		s.r_big->Finish(&s.big, &s.status, &s);
		break;
	case PEER_BIGINOUT:
		s.r_big = st->AsyncBigInOut(c, big_, &cq_);
		s.r_big->Finish(&s.big, &s.status, &s);
		break;
	case PEER_OOL64K:
		s.r_osum = st->AsyncOol64k(c, ool_, &cq_);
		s.r_osum->Finish(&s.osum, &s.status, &s);
		break;
	default:
		s.r_osum = st->AsyncOol1m(c, ool_, &cq_);
		s.r_osum->Finish(&s.osum, &s.status, &s);
		break;
	}
}

/* n calls numbered from first, --inflight of them outstanding. A failed call ends the run
 * only once the calls still outstanding are in (their deadlines bound the wait). */
int
Client::pipeline(unsigned long first, unsigned long n)
{
	std::unique_ptr<Slot[]> slots(new Slot[a_.inflight]);
	unsigned long next = first, end = first + n, outstanding = 0;
	int status = PEER_EXIT_OK;

	for (unsigned k = 0; k < a_.inflight && next < end; k++, outstanding++)
		start(slots[k], next++);
	while (outstanding > 0) {
		void *tag;
		bool ok;

		if (!cq_.Next(&tag, &ok))
			break;
		outstanding--;
		Slot &s = *static_cast<Slot *>(tag);
		int r = s.status.ok() ? check(s) : failed(s);

		if (status == PEER_EXIT_OK)
			status = r;
		if (status == PEER_EXIT_OK && next < end) {
			start(s, next++);
			outstanding++;
		}
	}
	return status;
}

int
Client::calls(unsigned long first, unsigned long n)
{
	int status = PEER_EXIT_OK;
	Slot s;

	if (a_.inflight > 1)
		return n == 0 ? PEER_EXIT_OK : pipeline(first, n);
	for (unsigned long i = first; i < first + n && status == PEER_EXIT_OK; i++)
		status = call(s, i);
	return status;
}

int
Client::failed(const Slot &s)
{
	const char *row = peer_rows[a_.row].name;
	const std::string &msg = s.status.error_message();

	switch (s.status.error_code()) {
	case grpc::StatusCode::INVALID_ARGUMENT:
		peer_err(&grpc_info, "%s call %lu: the server refused the data: %s", row, s.i,
			 msg.c_str());
		return PEER_EXIT_WRONG;
	case grpc::StatusCode::DEADLINE_EXCEEDED:
		peer_err(&grpc_info, "%s call %lu: timed out after %u ms", row, s.i, a_.timeout_ms);
		return PEER_EXIT_TIMEOUT;
	default:
		peer_err(&grpc_info, "%s call %lu: status %d: %s", row, s.i,
			 (int)s.status.error_code(), msg.c_str());
		return PEER_EXIT_FAILED;
	}
}

int
Client::check(const Slot &s)
{
	const char *row = peer_rows[a_.row].name;

	switch (a_.row) {
	case PEER_ADD: {
		int32_t want = (int32_t)(uint32_t)(s.i + 1u);

		if (s.sum.sum() != want) {
			peer_err(&grpc_info, "add call %lu: wrong answer %d, expected %d", s.i,
				 s.sum.sum(), want);
			return PEER_EXIT_WRONG;
		}
		break;
	}
	case PEER_BIGOUT:
	case PEER_BIGINOUT: {
		const std::string &got = s.big.data();
		const char *want = a_.row == PEER_BIGOUT ? d_.out : d_.inout_out;

		if (got.size() != PEER_BIG || memcmp(got.data(), want, PEER_BIG) != 0) {
			peer_err(&grpc_info,
				 "%s call %lu: wrong answer (%zu bytes, not the pattern)", row, s.i,
				 got.size());
			return PEER_EXIT_WRONG;
		}
		break;
	}
	case PEER_OOL64K:
	case PEER_OOL1M:
		if (s.osum.sum() != d_.ool_sum) {
			peer_err(&grpc_info, "%s call %lu: wrong checksum %llu, expected %llu", row,
				 s.i, (unsigned long long)s.osum.sum(),
				 (unsigned long long)d_.ool_sum);
			return PEER_EXIT_WRONG;
		}
		break;
	default:
		break;
	}
	return PEER_EXIT_OK;
}

int
grpc_peer_call(const peer_args &a)
{
	peer_data d;

	if (peer_data_init(&d, a.row, a.corrupt) != 0) {
		peer_err(&grpc_info, "out of memory");
		return PEER_EXIT_FAILED;
	}
	int status;
	{
		Client c(a, d);
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

	if (peer_parse(argc, argv, &grpc_info, &a) != 0)
		return PEER_EXIT_USAGE;
	if (a.cmd == PEER_CMD_SERVE) {
		peer_setup_server();
		return grpc_peer_serve(a);
	}
	if (a.cmd == PEER_CMD_CALL) {
		peer_setup_client();
		return grpc_peer_call(a);
	}
	return PEER_EXIT_OK;
}
