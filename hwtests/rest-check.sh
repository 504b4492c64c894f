#!/usr/bin/env bash
# hwtests/rest-check.sh APP_ID [--connect | --disconnect] [API_PORT]
# Calls the REST API like the MAUI sample does: Access Code V1 for the current second, one retry
# with the previous second on any non-2xx. Prints ReceiverInfo, then positionStream and tmmInfo.
set -euo pipefail
id=${1:?usage: $0 APP_ID [--connect|--disconnect] [API_PORT]}
action=${2:-}
port=${3:-9637}
case "$action" in --connect | --disconnect | "") ;; *) port=$action; action= ;; esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

code() {  # code [seconds-offset]: tmmtools/peers/access_codes.py, under Debian's /usr/bin/python3
    PYTHONPATH="$root" /usr/bin/python3 -B -m tmmtools.peers.access_codes v1 "$id" "${1:-0}"
}

call() {  # call METHOD PATH [BODY]
    local status
    for offset in 0 -1; do
        status=$(curl -s -o /tmp/rest-check.$$ -w '%{http_code}' -X "$1" -H "Authorization: Basic $(code $offset)" \
            ${3:+-H 'Content-Type: application/json' -d "$3"} "http://localhost:$port$2")
        if [[ $status == 2* ]]; then cat /tmp/rest-check.$$; echo; rm -f /tmp/rest-check.$$; return 0; fi
    done
    echo "$1 $2: HTTP $status: $(cat /tmp/rest-check.$$)" >&2
    rm -f /tmp/rest-check.$$
    return 1
}

case "$action" in
    --connect) call PUT /api/v1/receiver '{"isConnected":true}' ;;
    --disconnect) call PUT /api/v1/receiver '{"isConnected":false}' ;;
    *)
        call GET /api/v1/receiver
        call GET '/api/v1/positionStream?format=locationV2'
        call GET /api/v1/tmmInfo
        ;;
esac
