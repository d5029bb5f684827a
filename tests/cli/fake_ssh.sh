#!/bin/sh
# A stand-in for ssh, for tests/cli/parallel_test.py: GNU parallel is given
# `--ssh tests/cli/fake_ssh.sh -S 1/hostA,1/hostB` and this script plays the
# other machines. Each host is a folder of its own, $FAKE_SSH_ROOT/HOST
# (made on first use): the command runs there, with HOME there, SHELL
# /bin/sh and nothing else of the caller's environment but PATH,
# as a login on that host would run it (GNU parallel's remote worker runs
# each job with $SHELL), so whatever `--basefile` sends (through rsync,
# whose `-e` is this script too, so `rsync --server` runs in that folder)
# lands there and a job finds it by a path relative to its working directory.
#
#   fake_ssh.sh [SSH OPTIONS] [USER@]HOST [--] COMMAND...
#
# As ssh does, the words of COMMAND are joined by spaces and the result is
# run by the login shell (here sh -c). Each call is logged, one line each
# (host, then the command), to $FAKE_SSH_ROOT/calls.log, so a test can show
# that every host was reached.
set -eu
root=${FAKE_SSH_ROOT:?fake_ssh.sh: set FAKE_SSH_ROOT to the folder of the fake hosts}

# ssh's options: those that take a value (-l user, -p port, -o opt, -S
# control path, ...), attached or not, and the flags (-x, -T, -q, -n, -M ...).
while [ $# -gt 0 ]; do
  case $1 in
    --) shift; break ;;
    -[BbcDEeFIiJLlmOoPpQRSWw]) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
if [ $# -eq 0 ]; then
  echo "fake_ssh.sh: no host" >&2
  exit 255
fi
host=${1#*@}
shift
[ "${1:-}" = "--" ] && shift
case $host in
  '' | */* | . | ..)
    echo "fake_ssh.sh: bad host name '$host'" >&2
    exit 255 ;;
esac

dir=$root/$host
mkdir -p "$dir"
printf '%s\t%s\n' "$host" "$*" >> "$root/calls.log"
cd "$dir"
exec env -i HOME="$dir" PATH="$PATH" SHELL=/bin/sh sh -c "$*"
