#!/usr/bin/env bash
# Runs one local server under `svc start` or the tests, in a process group of its own, so that a
# Ctrl-C meant for svc does not reach the server before the services using it have stopped.
#
#   usage: supervise.sh <stop-signal> <grace-seconds> <command> [args...]
#
# TERM, INT or HUP to this script sends <stop-signal> to the server (postgres wants INT for a fast
# shutdown, the others TERM), then KILL after <grace-seconds>. Our stdin is a pipe whose other end
# only the parent holds: end-of-file means the parent died (even by SIGKILL), and the server is
# stopped the same way, so nothing outlives the process that started it.
set -u
sig=$1 grace=$2
shift 2

"$@" </dev/null &
server=$!
stopping=0
deadline=0

stop() {
  ((stopping)) && return
  stopping=1
  deadline=$((SECONDS + grace))
  kill -s "$sig" "$server" 2>/dev/null
}
trap stop TERM INT HUP

# bash reaps the server as soon as it exits, so `kill -0` fails from then on.
while kill -0 "$server" 2>/dev/null; do
  if ((stopping)); then
    ((SECONDS >= deadline)) && kill -KILL "$server" 2>/dev/null
    sleep 0.2
  else
    read -r -t 1 _
    status=$?
    # 1..128: end of file (the parent is gone); above 128: the timeout, or a trapped signal.
    ((status > 0 && status <= 128)) && stop
  fi
done
wait "$server"
