#!/bin/sh
# tls-netns.sh - tls: between machines: two network namespaces joined by a veth pair, the
# example's tls-server in one and tls-client in the other, over IPv4 and IPv6, with mutual
# authentication (tests/tls/certs.sh's certificates; the server's names are those of the
# address, given to the client as IDL_TLS_NAME and by the configuration API):
#   - the client sees the server's certificate verified (its CN and DNS name), the routine
#     sees the client's (CN, DNS name, SPIFFE ID), and the server's authorisation hook lets
#     this client's SAN call secret;
#   - a client of another CA is refused by the server (IDL_ECERT on its first call), and
#     the server's log names the reason.
. "$IDL_TOP_SRCDIR/tests/net/lib.sh"

TLS_SERVER=$IDL_TOP_BUILDDIR/examples/tls/tls-server
TLS_CLIENT=$IDL_TOP_BUILDDIR/examples/tls/tls-client
[ -x "$TLS_SERVER" ] || skip "the tls: transport is not built"
can_netns || skip "$NET_NETNS_WHY"
sh "$IDL_TOP_SRCDIR/tests/tls/certs.sh" "$NET_TMP/certs" >/dev/null ||
	skip "no certificates: the openssl command is missing"
c=$NET_TMP/certs
srv=idlkit-tsrv-$$
cli=idlkit-tcli-$$
netns_pair "$srv" "$cli" ta$$ tb$$ 10.232.0 fd00:232
S="nsenter --net=/run/netns/$srv --"
C="nsenter --net=/run/netns/$cli --"
hosts="10.232.0.1"
[ $ipv6 = 1 ] && hosts="$hosts [fd00:232::1]"

for h in $hosts; do
	addr="tls:$h:7500"
	# The server from its environment, on every address of its machine.
	start_server "$NET_TMP/server.out" env IDL_TLS_CERT="$c/server.crt" \
		IDL_TLS_KEY="$c/server.key" IDL_TLS_CA="$c/ca.crt" $S "$TLS_SERVER" "tls:*:7500"
	pid=$NET_LAST_PID
	# The client by the configuration API; the server's certificate is for localhost.
	$C "$TLS_CLIENT" -c "$c/client.crt" -k "$c/client.key" -a "$c/ca.crt" -n localhost \
		"$addr" >"$NET_TMP/client.out" 2>&1 ||
		{ cat "$NET_TMP/client.out"; fail "tls-client $addr across namespaces"; }
	grep -q '^server: cn=localhost verified=1 .* dns=localhost TLSv1.3 idlkit/1$' \
		"$NET_TMP/client.out" || fail "$addr: the client does not see the server verified"
	grep -q '^whoami: cn=client verified=1 dns=client.idlkit.test uri=spiffe://idlkit.test/client spiffe=spiffe://idlkit.test/client$' \
		"$NET_TMP/client.out" || fail "$addr: the routine does not see the client's SAN"
	grep -q '^secret: swordfish$' "$NET_TMP/client.out" ||
		fail "$addr: the hook refused the client its SAN allows"
	say "$addr across namespaces, mutual authentication:"
	sed 's/^/    /' "$NET_TMP/client.out"
	# The client by the environment, its certificate from another CA.
	$C env IDL_TLS_CERT="$c/stranger-client.crt" IDL_TLS_KEY="$c/stranger-client.key" \
		IDL_TLS_CA="$c/ca.crt" IDL_TLS_NAME=localhost "$TLS_CLIENT" "$addr" \
		>"$NET_TMP/stranger.out" 2>&1 && fail "$addr: a client of another CA was served"
	grep -q 'ECERT' "$NET_TMP/stranger.out" ||
		{ cat "$NET_TMP/stranger.out"; fail "$addr: a client of another CA: not ECERT"; }
	i=0
	until grep -q "ECERT: the client's certificate: unknown CA" "$NET_TMP/server.out.err"; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "$addr: the server's log does not say why it refused"
		sleep 0.01
	done
	say "$addr: a client of another CA refused: $(grep -o 'ECERT.*' "$NET_TMP/stranger.out")"
	stop_server "$pid"
done
[ $ipv6 = 1 ] || say "IPv6 addresses refused here: IPv6 cases not run"
exit 0
