#!/bin/bash
# A remote engine: dockerd listening on tcp://127.0.0.1:PORT with TLS
# (a CA, a server and a client certificate made here), reached through
# DOCKER_HOST with DOCKER_TLS_VERIFY and DOCKER_CERT_PATH.  The engine is
# asked, the image built and a command run over TLS; a client certificate from another
# CA, a missing key.pem, and plain HTTP to the TLS port each fail, named.
# (Podman 4.3's service has no TLS listener: dockerd only.)

. "$(dirname "$0")/lib.sh"

plan 7

new_workspace
mkdir -p "$HOME/.crucible"
echo '{"sandbox": {"enabled": true, "backend": "container"}}' >"$HOME/.crucible/config.json"

# make_ca DIR NAME: a CA in DIR; make_cert DIR CA NAME EXT: a certificate
# signed by CA.
make_ca() {
  mkdir -p "$1"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$2" \
    -keyout "$1/ca-key.pem" -out "$1/ca.pem" 2>/dev/null
}
make_cert() {
  local dir=$1 ca=$2 cn=$3 ext=$4
  mkdir -p "$dir"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$cn" \
    -keyout "$dir/key.pem" -out "$dir/req.csr" 2>/dev/null
  printf '%s\n' "$ext" >"$dir/ext.cnf"
  openssl x509 -req -in "$dir/req.csr" -CA "$ca/ca.pem" -CAkey "$ca/ca-key.pem" \
    -CAcreateserial -days 2 -extfile "$dir/ext.cnf" -out "$dir/cert.pem" 2>/dev/null
  cp "$ca/ca.pem" "$dir/ca.pem"
}

why=
command -v openssl >/dev/null || why="no openssl"
if [ -z "$why" ]; then
  T="$ENGINE_DIR/tls"
  make_ca "$T/ca" crucible-test-ca
  make_cert "$T/server" "$T/ca" engine 'subjectAltName=IP:127.0.0.1
extendedKeyUsage=serverAuth'
  make_cert "$T/client" "$T/ca" client 'extendedKeyUsage=clientAuth'
  make_ca "$T/other-ca" another-ca
  make_cert "$T/stranger" "$T/other-ca" stranger 'extendedKeyUsage=clientAuth'
  [ -s "$T/client/cert.pem" ] && [ -s "$T/stranger/cert.pem" ] || why="openssl made no certificates"
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  ENGINE_DOCKER_ARGS="-H tcp://127.0.0.1:$PORT --tlsverify --tlscacert $T/ca/ca.pem --tlscert $T/server/cert.pem --tlskey $T/server/key.pem"
  engines_start docker
fi
if [ -n "$why" ] || ! engine_up docker; then
  ENGINE_WHY=${why:-$ENGINE_WHY}
  engine_skip 7 docker
  exit 0
fi

export DOCKER_HOST="tcp://127.0.0.1:$PORT" DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH="$T/client"
crun sandbox inspect
like "$rc|$err|$out" "^0\\|Asking the engine…\\|.*
  engine    tcp://127.0.0.1:$PORT, from DOCKER_HOST
.*  engine                docker [^ ]+, API 1\\.41" \
  "over TLS: inspect reaches the remote engine named by DOCKER_HOST"
crun sandbox image build
id=$(engine_api docker GET /v1.41/images/crucible-sandbox:latest/json | sed -n 's/^{"Id":"\(sha256:[0-9a-f]*\)".*/\1/p')
is "$rc|$out" "0|built crucible-sandbox:latest: $id" "over TLS: image build makes the image on the remote engine"
crun sandbox inspect --json
like "$out" "\"engine_reachable\":true,.*\"image\":\\{\"name\":\"crucible-sandbox:latest\",\"id\":\"$id\"\\}" \
  "over TLS: inspect --json reports the image ID"
echo remote-input >in.txt
crun run 'cat in.txt; echo remote-output >out.txt'
is "$rc|$out|$(cat out.txt 2>/dev/null)" "0|remote-input|remote-output" \
  "over TLS: a command runs on the remote engine, its workspace in and its changes out"

DOCKER_CERT_PATH="$T/stranger" crun sandbox inspect --json
like "$out" "\"engine_reachable\":false,.*\"reason\":\"engine tcp://127.0.0.1:$PORT: GET /_ping: .*(certificate|SSL|ssl|alert)" \
  "a client certificate from another CA: unavailable, the TLS failure named"
mkdir -p "$T/nokey" && cp "$T/client/ca.pem" "$T/client/cert.pem" "$T/nokey/"
DOCKER_CERT_PATH="$T/nokey" crun sandbox inspect --json
like "$out" "\"reason\":\"the engine tcp://127.0.0.1:$PORT \\(DOCKER_HOST\\): TLS \\(DOCKER_TLS_VERIFY\\): <path>: No such file or directory\"" \
  "a missing key.pem: unavailable, naming the file"
DOCKER_TLS_VERIFY= crun sandbox inspect --json
like "$out" "\"engine_reachable\":false,.*\"reason\":\"engine tcp://127.0.0.1:$PORT: GET /_ping: " \
  "plain HTTP to the TLS port (loopback, so allowed): the engine does not answer it"
