#!/bin/bash
# Run by boot_probe.service when the Debian 12 root of package_test.py boots
# under systemd-nspawn with nextword.socket enabled: the service as systemd
# starts it at the first connection and runs it (its sandbox, its user, its
# credential). Writes what it saw to
# /var/lib/nextword-probe/STEP, then powers the container off.
out=/var/lib/nextword-probe
mkdir -p "$out"
request() {  # request BODY [KEY]: one HTTP/1.0 call, the whole response
  exec 3<>/dev/tcp/127.0.0.1/8080 || return 1
  printf 'POST /v1/predict HTTP/1.0\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s' \
    "${2:+X-API-Key: $2$'\r\n'}" "${#1}" "$1" >&3
  cat <&3
  exec 3<&-
}
# Socket activation: the service starts at the first connection, which
# waits for it (the model loads) rather than being refused.
systemctl is-active nextword.socket nextword.service >"$out/before"
request '{"phrase": "the president of the united"}' "$(head -n 1 /etc/nextword/api-key)" >"$out/key"
request '{"phrase": "the president of the united"}' >"$out/nokey"
systemctl is-active nextword >"$out/active"
pid=$(systemctl show nextword -p MainPID --value)
stat -c '%u' "/proc/$pid" >"$out/uid"
tr '\0' ' ' <"/proc/$pid/cmdline" >"$out/cmdline"
systemctl stop nextword
systemctl show nextword -p Result -p ExecMainStatus >"$out/stopped"
journalctl -u nextword -b --no-pager -o cat >"$out/journal"
echo done >"$out/done"
systemctl poweroff
