#!/bin/bash
# Run inside the throwaway Debian 12 root by tests/package/package_test.py,
# after `apt-get install ./nextword_*.deb`: uses the installed nextword as a
# person would and writes what each step printed to /tmp/results/STEP (its
# exit status to STEP.rc), for the test to check outside.
set -u
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
step docs ls /usr/share/doc/nextword/docs
step key_mode stat -c '%a %U' /etc/nextword/api-key
step verify systemd-analyze verify /lib/systemd/system/nextword.socket \
  /lib/systemd/system/nextword.service
step enabled systemctl is-enabled nextword.socket nextword.service

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
