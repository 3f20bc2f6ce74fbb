#!/usr/bin/env bash
# Takes a service node out of every backend of deploy/haproxy/haproxy.cfg, or puts it back,
# through HAProxy's runtime API (socat on GATEWAY_LB_SOCKET). docs/deployment.md has the drain
# procedure this is part of; test/deploy/haproxy.test.ts runs it.
#
#   node-state.sh drain NODE [SECONDS]  no new connections or requests go to NODE; waits (at most
#                                       SECONDS, default 60) until no HTTP request is in flight on
#                                       it, then lists the MLLP and DICOM connections it still has
#                                       (they end when the node is stopped: SIGTERM, 10 s)
#   node-state.sh ready NODE            NODE takes traffic again (after its restart)
#   node-state.sh status NODE           NODE's state and connections in each backend
set -euo pipefail
socket=${GATEWAY_LB_SOCKET:-/run/haproxy/clinical-gateway.sock}
usage="usage: node-state.sh drain|ready|status NODE [SECONDS]"
action=${1:?$usage}
node=${2:?$usage}
wait_seconds=${3:-60}

api() { printf '%s\n' "$1" | socat -t 5 stdio "UNIX-CONNECT:$socket"; }

# One line per backend holding NODE: backend, mode (http or tcp), status, current connections.
# Columns are found by name in the header of `show stat`, which HAProxy versions extend.
servers() {
  api 'show stat -1 4 -1' | awk -F, -v node="$node" '
    NR == 1 { sub(/^# /, ""); for (i = 1; i <= NF; i++) column[$i] = i; next }
    $column["svname"] == node { print $column["pxname"], $column["mode"], $column["status"], $column["scur"] }'
}

case "$action" in
  drain | ready)
    found=$(servers)
    if [ -z "$found" ]; then echo "node-state.sh: no backend has a server named $node" >&2; exit 1; fi
    while read -r backend _; do
      answer=$(api "set server $backend/$node state $action")
      if [ -n "$answer" ]; then echo "node-state.sh: $backend/$node: $answer" >&2; exit 1; fi
    done <<<"$found"
    echo "$node: $action in $(wc -l <<<"$found") backends"
    if [ "$action" = drain ]; then
      deadline=$((SECONDS + wait_seconds))
      while :; do
        in_flight=$(servers | awk '$2 == "http" { n += $4 } END { print n + 0 }')
        if [ "$in_flight" -eq 0 ]; then echo "$node: no HTTP request in flight"; break; fi
        if [ "$SECONDS" -ge "$deadline" ]; then echo "$node: $in_flight HTTP connection(s) still open after ${wait_seconds} s" >&2; break; fi
        sleep 1
      done
      servers | awk '$2 == "tcp" { print "'"$node"': " $1 " has " $4 " connection(s); they end when the node stops" }'
    fi
    ;;
  status)
    servers | awk '{ print $1 ": " $3 ", " $4 " connection(s)" }'
    ;;
  *)
    echo "$usage" >&2
    exit 2
    ;;
esac
