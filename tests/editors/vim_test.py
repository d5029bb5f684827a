#!/usr/bin/env python3
"""`nextword lsp` in Vim 9 (Debian 12's 9.0), headless, with no plugin:

  - Vim's own LSP channel mode, by hand: job_start([NEXTWORD, 'lsp', '-m',
    MODEL], {'in_mode': 'lsp', 'out_mode': 'lsp', 'err_mode': 'nl'}), then
    ch_evalexpr of initialize, ch_sendexpr of initialized and of didOpen (a
    Markdown document), ch_evalexpr of textDocument/completion: `time`
    first after `once upon a ti`, its textEdit (0,12)-(0,14); nothing inside
    a fenced code block; shutdown answers null and exit ends the server 0;
  - docs/editors.md's Vim set-up (tests/editors/nextword.vim, its command pointed at
    the binary under test) on a Markdown buffer: its omnifunc's start column
    and words, and Ctrl-X Ctrl-O Ctrl-Y typed in insert mode turning
    `once upon a ti` into `once upon a time`.

A Vim script driver writes what it saw to a JSON file, checked here.

    python3 tests/editors/vim_test.py build/nextword data

Exits 77 (skipped) when vim is missing or has no LSP channel mode
(patch 8.2.4780), 1 when a check fails.
"""
import json
import os
import subprocess
import sys
import tempfile

from editors_common import (Failure, arguments, check_no_items, check_doc_shows,
                            check_sync_and_provider, check_time_item, configuration, run_checks,
                            run_driver, skip_unless)

TIMEOUT_MS = 10000  # for each request

DRIVER = r"""
let s:result = #{stderr: []}
let s:timeout = str2nr($NW_TIMEOUT_MS)
let s:dir = $NW_DIR

function! s:Ms(start) abort
  return reltimefloat(reltime(a:start)) * 1000
endfunction

" Vim's LSP channel by hand: the brief exchange an LSP client makes.
function! s:Raw() abort
  let job = job_start(json_decode($NW_CMD), #{in_mode: 'lsp', out_mode: 'lsp',
        \ err_mode: 'nl', err_cb: {channel, line -> add(s:result.stderr, line)}})
  let start = reltime()
  let s:result.initialize = ch_evalexpr(job, #{method: 'initialize', params: #{
        \ processId: getpid(), rootUri: v:null, clientInfo: #{name: 'vim'},
        \ capabilities: #{general: #{positionEncodings: ['utf-16']}}}}, #{timeout: s:timeout})
  let s:result.initialize_ms = s:Ms(start)
  call ch_sendexpr(job, #{method: 'initialized', params: {}})
  let uri = 'file://' .. s:dir .. '/raw.md'
  call ch_sendexpr(job, #{method: 'textDocument/didOpen', params: #{textDocument: #{
        \ uri: uri, languageId: 'markdown', version: 1,
        \ text: "once upon a ti\n\n```\nonce upon a ti\n```\n"}}})
  let start = reltime()
  let s:result.raw = ch_evalexpr(job, #{method: 'textDocument/completion', params: #{
        \ textDocument: #{uri: uri}, position: #{line: 0, character: 14}}}, #{timeout: s:timeout})
  let s:result.raw_ms = s:Ms(start)
  let s:result.raw_fence = ch_evalexpr(job, #{method: 'textDocument/completion', params: #{
        \ textDocument: #{uri: uri}, position: #{line: 3, character: 14}}}, #{timeout: s:timeout})
  let s:result.shutdown = ch_evalexpr(job, #{method: 'shutdown'}, #{timeout: s:timeout})
  call ch_sendexpr(job, #{method: 'exit'})
  let start = reltime()
  while job_status(job) ==# 'run' && s:Ms(start) < s:timeout
    sleep 5m
  endwhile
  let s:result.exit = #{status: job_status(job), exitval: job_info(job).exitval}
  let s:result.exit_ms = s:Ms(start)
endfunction

" docs/editors.md's set-up: the omnifunc called as insert mode calls it, then typed.
function! s:Configured() abort
  execute 'source' fnameescape($NW_CONFIG)
  execute 'edit' fnameescape(s:dir .. '/story.md')
  call setline(1, 'once upon a ti')
  set filetype=markdown
  let s:result.omnifunc = &omnifunc
  set virtualedit=onemore
  call cursor(1, 15)  " after the last character, as in insert mode
  let s:result.findstart = NextwordComplete(1, '')
  let s:result.words = NextwordComplete(0, 'ti')
  call cursor(1, 1)
  set virtualedit=
  call feedkeys("A\<C-x>\<C-o>\<C-y>\<Esc>", 'xt')
  let s:result.typed = getline(1)
endfunction

try
  call s:Raw()
  call s:Configured()
  let s:result.ok = v:true
catch
  let s:result.ok = v:false
  let s:result.error = v:exception .. ' at ' .. v:throwpoint
endtry
let s:result.config_stderr = get(g:, 'nextword_stderr', [])
call writefile([json_encode(s:result)], $NW_RESULT)
qall!
"""


def response_result(response, what):
    """A response dict from ch_evalexpr: its result, or a Failure (an empty
    dict is Vim's timeout)."""
    if not response:
        raise Failure(f"{what}: no response within {TIMEOUT_MS} ms (ch_evalexpr returned {{}})")
    if "error" in response:
        raise Failure(f"{what}: error response {json.dumps(response)}")
    if "result" not in response:
        raise Failure(f"{what}: a response without a result: {json.dumps(response)}")
    return response["result"]


class Checks:
    def __init__(self, nextword, model, workdir):
        self.nextword, self.model, self.workdir = nextword, model, workdir
        self.run = None

    def run_vim(self):
        cmd = [self.nextword, "lsp", "-m", self.model]
        vim_list = "[" + ", ".join("'" + a.replace("'", "''") + "'" for a in cmd) + "]"
        config = os.path.join(self.workdir, "nextword.vim")
        with open(config, "w", encoding="utf-8") as f:
            f.write(configuration("nextword.vim", "['nextword', 'lsp']", vim_list))
        driver = os.path.join(self.workdir, "driver.vim")
        with open(driver, "w", encoding="utf-8") as f:
            f.write(DRIVER)
        _, self.run, seconds = run_driver(
            "vim", ["vim", "-N", "-u", "NONE", "-i", "NONE", "-n", "-es", "-c", f"source {driver}"],
            self.workdir, config, TIMEOUT_MS, NW_CMD=json.dumps(cmd))
        if not self.run.get("ok"):
            raise Failure(f"the Vim driver failed: {self.run.get('error')}; the server's stderr "
                          f"{self.run.get('stderr')} {self.run.get('config_stderr')}")
        print(f"     vim ran {seconds:.2f} s: initialize {self.run['initialize_ms']:.0f} ms, "
              f"completion {self.run['raw_ms']:.1f} ms, exit {self.run['exit_ms']:.0f} ms "
              "after the notification")

    def need_run(self):
        if self.run is None or not self.run.get("ok"):
            raise Failure("no result: Vim's run failed (above)")
        return self.run

    def initialize(self):
        result = response_result(self.need_run()["initialize"], "initialize")
        caps = result.get("capabilities", {}) if isinstance(result, dict) else {}
        if caps.get("positionEncoding") != "utf-16":
            raise Failure(f"positionEncoding {caps.get('positionEncoding')!r}, expected 'utf-16' "
                          "(the one the client offered)")
        check_sync_and_provider(caps, result)

    def completion(self):
        result = response_result(self.need_run()["raw"], "completion after 'once upon a ti'")
        check_time_item(result, 0, 12, 14, "ch_evalexpr completion at (0,14) of 'once upon a ti'")

    def fenced(self):
        result = response_result(self.need_run()["raw_fence"], "completion in a fenced block")
        check_no_items(result, "ch_evalexpr completion at (3,14), inside a fenced code block")

    def lifecycle(self):
        run = self.need_run()
        result = response_result(run["shutdown"], "shutdown")
        if result is not None:
            raise Failure(f"shutdown answered {json.dumps(result)}, expected null")
        exit = run["exit"]
        if exit.get("status") != "dead" or exit.get("exitval") != 0:
            raise Failure(f"after exit the job is {exit.get('status')!r} with exit value "
                          f"{exit.get('exitval')!r}, expected dead and 0")

    def configured(self):
        run = self.need_run()
        if run["omnifunc"] != "NextwordComplete":
            raise Failure(f"docs/editors.md's set-up left omnifunc={run['omnifunc']!r}")
        if run["findstart"] != 12:
            raise Failure(f"NextwordComplete(1, '') at the end of 'once upon a ti' returned "
                          f"{run['findstart']}, expected 12 (the byte where 'ti' starts)")
        words = [w.get("word") for w in run["words"]] if isinstance(run["words"], list) else run["words"]
        if not words or words[0] != "time":
            raise Failure(f"NextwordComplete(0, 'ti') offered {words}, expected 'time' first")
        if run["typed"] != "once upon a time":
            raise Failure(f"A, Ctrl-X Ctrl-O, Ctrl-Y on 'once upon a ti' left {run['typed']!r}, "
                          "expected 'once upon a time'")


def has_lsp_mode():
    r = subprocess.run(["vim", "-N", "-u", "NONE", "-i", "NONE", "-es", "-c",
                        "if has('patch-8.2.4780') && has('job') | qall! | else | cquit | endif"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=30, check=False)
    return r.returncode == 0


def main():
    nextword, model = arguments("usage: vim_test.py BUILD/nextword DATA_DIR")
    skip_unless("vim")
    if not has_lsp_mode():
        print("skipped: this vim has no LSP channel mode (patch 8.2.4780) or no +job")
        return 77
    with tempfile.TemporaryDirectory(prefix="nextword-vim-") as workdir:
        checks = Checks(nextword, model, workdir)
        return run_checks("vim_test", [
            ("Vim runs the channel exchange and docs/editors.md's set-up", checks.run_vim),
            ("initialize: UTF-16, incremental sync, a completion provider", checks.initialize),
            ("'once upon a ti': time first, textEdit (0,12)-(0,14)", checks.completion),
            ("a fenced code block: no items", checks.fenced),
            ("shutdown answers null, exit ends the server with 0", checks.lifecycle),
            ("docs/editors.md's set-up: omnifunc, start column, Ctrl-X Ctrl-O Ctrl-Y", checks.configured),
            ("docs/editors.md shows tests/editors/nextword.vim", lambda: check_doc_shows("nextword.vim")),
        ])


if __name__ == "__main__":
    sys.exit(main())
