#!/bin/sh
# A minimal MCP server in POSIX sh, for the container tests: the images
# `crucible sandbox image build` makes from busybox-static hold no node or
# python, so the repository's own test server cannot run there.  One
# JSON-RPC message a line on stdin, one answer a line on stdout.  Tools:
# whoami (the uid and the network interfaces it sees), write (writes
# made-by-server.txt in its working directory and a line to stderr).
reply() { printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$1" "$2"; }
while IFS= read -r line; do
  id=
  case $line in
    *'"id":'*)
      rest=${line#*\"id\":}
      id=${rest%%[,\}]*}
      ;;
  esac
  case $line in
    *'"method":"initialize"'*)
      reply "$id" '{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sh-server","version":"1"}}'
      ;;
    *'"method":"tools/list"'*)
      reply "$id" '{"tools":[{"name":"whoami","description":"Say the uid and the network interfaces","inputSchema":{"type":"object"}},{"name":"write","description":"Write made-by-server.txt","inputSchema":{"type":"object"}}]}'
      ;;
    *'"method":"tools/call"'*'"name":"whoami"'*)
      net=$(ls /sys/class/net 2>/dev/null | tr '\n' ' ')
      reply "$id" "{\"content\":[{\"type\":\"text\",\"text\":\"uid $(id -u) net ${net% }\"}]}"
      ;;
    *'"method":"tools/call"'*'"name":"write"'*)
      echo written-inside >made-by-server.txt
      echo "sh-server: wrote made-by-server.txt" >&2
      reply "$id" '{"content":[{"type":"text","text":"wrote"}]}'
      ;;
    *'"method":"ping"'*)
      reply "$id" '{}'
      ;;
    *'"method":'*)
      [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no such method"}}\n' "$id"
      ;;
  esac
done
