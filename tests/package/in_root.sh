#!/bin/bash
# Run inside the throwaway Debian 12 root by tests/package/package_test.py,
# after `apt-get install ./nextword_*.deb`: uses the installed nextword as a
# person would and writes what each step printed to /tmp/results/STEP (its
# exit status to STEP.rc), for the test to check outside.
#   in_root.sh PORT   PORT: a free port for the service's command line
set -u
port=$1
out=/tmp/results
mkdir -p "$out"
cd /tmp
step() {  # step NAME COMMAND...: stdout to NAME, stderr to NAME.err
  local name=$1
  shift
  "$@" >"$out/$name" 2>"$out/$name.err"
  echo $? >"$out/$name.rc"
}

step version nextword --version
step predict nextword predict "the president of the united"
step stories nextword predict --model stories "once upon a"
step models nextword models
step models_json nextword models -f json
step man_w man -w nextword
step man env MANWIDTH=100 man -P cat nextword
step key_mode stat -c '%a %U' /etc/nextword/api-key
step verify systemd-analyze verify /lib/systemd/system/nextword.service

# The bash completion, as bash-completion loads it on first use.
completions() {
  source /usr/share/bash-completion/bash_completion
  _completion_loader nextword
  local function
  function=$(complete -p nextword | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
  COMP_WORDS=(nextword pre)
  COMP_CWORD=1
  COMP_LINE="nextword pre"
  COMP_POINT=${#COMP_LINE}
  "$function" nextword pre nextword
  printf '%s\n' "${COMPREPLY[@]}"
  COMP_WORDS=(nextword predict --mo)
  COMP_CWORD=2
  COMP_LINE="nextword predict --mo"
  COMP_POINT=${#COMP_LINE}
  "$function" nextword --mo predict
  printf '%s\n' "${COMPREPLY[@]}"
}
step completion completions

# The service's command line as systemd runs it: the options of
# /etc/default/nextword (its port changed to PORT), the key handed over as
# a credential, here a copy in a directory of the test's.
service() {
  set -a
  source /etc/default/nextword
  set +a
  NEXTWORD_SERVE_OPTIONS=${NEXTWORD_SERVE_OPTIONS/--port 8080/--port $port}
  local credentials=/tmp/credentials
  mkdir -p "$credentials"
  cp /etc/nextword/api-key "$credentials/api-key"
  local line
  line=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/nextword.service)
  line=${line//\$\{CREDENTIALS_DIRECTORY\}/$credentials}
  line=${line//\$NEXTWORD_SERVE_OPTIONS/$NEXTWORD_SERVE_OPTIONS}
  echo "$line" >"$out/service_line"
  $line 2>"$out/service_log" &
  local pid=$! key
  key=$(head -n 1 /etc/nextword/api-key)
  for _ in $(seq 1 300); do
    grep -q "listening on" "$out/service_log" 2>/dev/null && break
    sleep 0.1
  done
  request() {  # request BODY [KEY]: one HTTP/1.0 call, the whole response
    exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
    printf 'POST /v1/predict HTTP/1.0\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s' \
      "${2:+X-API-Key: $2$'\r\n'}" "${#1}" "$1" >&3
    cat <&3
    exec 3<&-
  }
  request '{"phrase": "the president of the united"}' >"$out/service_nokey"
  request '{"phrase": "the president of the united"}' "$key" >"$out/service_key"
  kill -TERM "$pid"
  wait "$pid"
}
step service service
