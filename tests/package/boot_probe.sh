#!/bin/bash
# Run by boot_probe.service when the Debian 12 root of package_test.py boots
# under systemd-nspawn with nextword.service enabled: the service as systemd
# runs it (its sandbox, its user, its credential). Writes what it saw to
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
for _ in $(seq 1 600); do  # the model loads: at most a minute
  journalctl -u nextword -b --no-pager -o cat | grep -q "listening on" && break
  sleep 0.1
done
systemctl is-active nextword >"$out/active"
pid=$(systemctl show nextword -p MainPID --value)
stat -c '%u' "/proc/$pid" >"$out/uid"
tr '\0' ' ' <"/proc/$pid/cmdline" >"$out/cmdline"
request '{"phrase": "the president of the united"}' >"$out/nokey"
request '{"phrase": "the president of the united"}' "$(head -n 1 /etc/nextword/api-key)" >"$out/key"
systemctl stop nextword
systemctl show nextword -p Result -p ExecMainStatus >"$out/stopped"
journalctl -u nextword -b --no-pager -o cat >"$out/journal"
echo done >"$out/done"
systemctl poweroff
