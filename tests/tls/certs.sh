#!/bin/sh
# tests/tls/certs.sh DIR - makes the tls: tests' certificates in DIR with the openssl command
# (ECDSA P-256 keys, mode 0600): a CA and what it issues - the server's (DNS localhost, IP
# 127.0.0.1 and ::1), the client's (CN client, DNS client.idlkit.test, URI
# spiffe://idlkit.test/client), one for either side (peer: the server's names, both uses), an
# expired server certificate, one not valid yet, one for another name, a revoked one and the
# CRL that revokes it - and, from another CA, a server and a client certificate. Each is
# NAME.crt with NAME.key; the CAs are ca.crt and other-ca.crt, the CRL crl.pem. Exits 77
# (skip) when openssl is not installed.
set -eu
dir=${1:?usage: certs.sh DIR}
command -v openssl >/dev/null 2>&1 || {
	echo "certs.sh: the openssl command is not installed: no certificates (skipped)"
	exit 77
}
mkdir -p "$dir"
cd "$dir"
umask 077

# A CA's files for `openssl ca` (which issues with explicit dates and keeps the index a
# CRL is made from).
ca_init() {
	mkdir -p "$1.db"
	: >"$1.db/index.txt"
	echo 1000 >"$1.db/serial"
	cat >"$1.cnf" <<CNF
[ca]
default_ca = this
[this]
dir = $1.db
database = \$dir/index.txt
serial = \$dir/serial
new_certs_dir = \$dir
certificate = $1.crt
private_key = $1.key
default_md = sha256
default_crl_days = 3650
policy = any
unique_subject = no
copy_extensions = copy
[any]
commonName = supplied
[req]
distinguished_name = dn
[dn]
[v3_ca]
basicConstraints = critical, CA:true
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
CNF
	openssl ecparam -name prime256v1 -genkey -noout -out "$1.key" 2>/dev/null
	openssl req -new -x509 -key "$1.key" -subj "/CN=$2" -days 3650 -config "$1.cnf" \
		-extensions v3_ca -out "$1.crt" 2>/dev/null
}

# issue CA NAME CN SAN START END [client|server]: NAME.key and NAME.crt signed by CA.
issue() {
	ca=$1 name=$2 cn=$3 san=$4 start=$5 end=$6 use=${7:-server}
	eku=serverAuth
	[ "$use" = client ] && eku=clientAuth
	[ "$use" = both ] && eku="serverAuth, clientAuth"
	openssl ecparam -name prime256v1 -genkey -noout -out "$name.key" 2>/dev/null
	openssl req -new -key "$name.key" -subj "/CN=$cn" -out "$name.csr" \
		-addext "subjectAltName = $san" -addext "extendedKeyUsage = $eku" \
		-addext "basicConstraints = CA:false" 2>/dev/null
	openssl ca -batch -config "$ca.cnf" -in "$name.csr" -out "$name.crt" -notext \
		-startdate "$start" -enddate "$end" 2>/dev/null
	rm -f "$name.csr"
}

past=20200101000000Z
future=20990101000000Z
ca_init ca "idlkit test CA"
ca_init other-ca "another CA"
issue ca server localhost "DNS:localhost, IP:127.0.0.1, IP:::1" $past $future
issue ca client client "DNS:client.idlkit.test, URI:spiffe://idlkit.test/client" $past $future client
issue ca peer localhost "DNS:localhost, IP:127.0.0.1, IP:::1, URI:spiffe://idlkit.test/peer" \
	$past $future both
issue ca client2 client2 "DNS:client2.idlkit.test" $past $future client
issue ca expired localhost "DNS:localhost, IP:127.0.0.1, IP:::1" 20200101000000Z 20200102000000Z
issue ca notyet localhost "DNS:localhost, IP:127.0.0.1, IP:::1" 20980101000000Z $future
issue ca wrongname other.example "DNS:other.example" $past $future
issue ca revoked localhost "DNS:localhost, IP:127.0.0.1, IP:::1" $past $future
issue other-ca stranger localhost "DNS:localhost, IP:127.0.0.1, IP:::1" $past $future
issue other-ca stranger-client client "DNS:client.idlkit.test" $past $future client
openssl ca -config ca.cnf -revoke revoked.crt 2>/dev/null
openssl ca -config ca.cnf -gencrl -out crl.pem 2>/dev/null
# What `openssl ca` kept goes: the directory holds the certificates, keys and CRL alone.
rm -rf ca.db other-ca.db ca.cnf other-ca.cnf
# The certificates and the CRL are public; the keys stay the owner's.
chmod 0644 ./*.crt crl.pem
chmod 0600 ./*.key
echo "certs.sh: certificates made in $dir"
