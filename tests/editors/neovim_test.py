#!/usr/bin/env python3
"""`nextword lsp` in Neovim (0.7.2, Debian 12's), headless: docs/editors.md's Neovim
set-up (tests/editors/nextword.lua, its command pointed at the binary under
test) starts the server with vim.lsp.start_client and attaches it with
vim.lsp.buf_attach_client when a buffer's filetype becomes markdown; a Lua
driver then asks client.request_sync('textDocument/completion') and writes
what came back to a JSON file, checked here:

  - on `once upon a ti`, the cursor at its end: `time` first, its textEdit
    replacing (0,12)-(0,14) with `time`, the list incomplete;
  - on a second Markdown buffer (the same server), the cursor inside a
    fenced code block: no items; after the block closes, `time` again;
  - the server's capabilities (UTF-16, incremental sync, completion), and
    the omnifunc the set-up gives the buffer.

    python3 tests/editors/neovim_test.py build/nextword data

Exits 77 (skipped) when nvim is missing, 1 when a check fails.
"""
import json
import os
import sys
import tempfile

from editors_common import (Failure, arguments, check_no_items, check_doc_shows,
                            check_sync_and_provider, check_time_item, configuration, run_checks,
                            run_driver, skip_unless)

TIMEOUT_MS = 10000  # for the server's initialization and each request

# The driver: Neovim runs it with -c "luafile ...". Whatever happens, it
# writes {"ok": ..., ...} to $NW_RESULT and quits.
DRIVER = r"""
local result = { log = {} }
local function log(s) table.insert(result.log, s) end
local timeout = tonumber(os.getenv('NW_TIMEOUT_MS'))
local dir = os.getenv('NW_DIR')

local function ms_since(t0) return (vim.loop.hrtime() - t0) / 1e6 end

-- A Markdown buffer holding `lines`, named DIR/NAME: the FileType autocmd
-- of the set-up starts (or reuses) the client and attaches it.
local function markdown_buffer(name, lines)
  local buf = vim.api.nvim_create_buf(true, false)
  vim.api.nvim_buf_set_name(buf, dir .. '/' .. name)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_set_current_buf(buf)
  vim.bo[buf].filetype = 'markdown'
  return buf
end

-- The one client attached to buf, once it is initialized (Neovim 0.7 lists
-- a buffer's clients only then).
local function the_client(buf)
  local ids = {}
  vim.wait(timeout, function()
    ids = vim.tbl_keys(vim.lsp.buf_get_clients(buf))
    return #ids > 0
  end, 5)
  if #ids ~= 1 then
    error('buffer ' .. buf .. ' has ' .. #ids .. ' initialized clients attached after '
          .. timeout .. ' ms, expected 1')
  end
  return vim.lsp.get_client_by_id(ids[1])
end

-- textDocument/completion at the end of line `line` (0-based) of buf.
local function complete(client, buf, line)
  local text = vim.api.nvim_buf_get_lines(buf, line, line + 1, true)[1]
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = line, character = vim.str_utfindex(text) },
    context = { triggerKind = 1 },
  }
  local t0 = vim.loop.hrtime()
  local response, err = client.request_sync('textDocument/completion', params, timeout, buf)
  local answer = { params = params, ms = ms_since(t0) }
  if response == nil then
    answer.client_error = tostring(err)
  else
    answer.error = response.err
    answer.result = response.result
  end
  return answer
end

local ok, err = pcall(function()
  dofile(os.getenv('NW_CONFIG'))

  local t0 = vim.loop.hrtime()
  local story = markdown_buffer('story.md', { 'once upon a ti' })
  local client = the_client(story)
  result.initialize_ms = ms_since(t0)
  result.capabilities = client.server_capabilities
  result.offset_encoding = client.offset_encoding
  result.story = complete(client, story, 0)
  vim.wait(1000, function() return vim.bo[story].omnifunc == 'v:lua.vim.lsp.omnifunc' end, 5)
  result.omnifunc = vim.bo[story].omnifunc

  local code = markdown_buffer('code.md', { '```', 'once upon a ti', '```', 'once upon a ti' })
  local second = the_client(code)
  result.same_client = second.id == client.id
  result.in_fence = complete(second, code, 1)
  result.after_fence = complete(second, code, 3)
  result.ok = true
end)
if not ok then
  result.ok = false
  result.error = tostring(err)
end
local f = assert(io.open(os.getenv('NW_RESULT'), 'w'))
f:write(vim.fn.json_encode(result))
f:close()
vim.cmd('qa!')
"""


def answer_result(answer, what):
    """The result of a completion the driver recorded, or a Failure that
    shows the request and what came back."""
    sent = json.dumps(answer.get("params"))
    if "client_error" in answer:
        raise Failure(f"{what}: request_sync failed ({answer['client_error']}); params {sent}")
    if answer.get("error") not in (None, []):
        raise Failure(f"{what}: error response {json.dumps(answer['error'])}; params {sent}")
    return answer.get("result")


class Checks:
    def __init__(self, nextword, model, workdir):
        self.nextword, self.model, self.workdir = nextword, model, workdir
        self.run = None

    def run_neovim(self):
        lua_cmd = "{ " + ", ".join(json.dumps(a) for a in (self.nextword, "lsp", "-m", self.model)) + " }"
        config = os.path.join(self.workdir, "nextword.lua")
        with open(config, "w", encoding="utf-8") as f:
            f.write(configuration("nextword.lua", "{ 'nextword', 'lsp' }", lua_cmd))
        driver = os.path.join(self.workdir, "driver.lua")
        with open(driver, "w", encoding="utf-8") as f:
            f.write(DRIVER)
        r, self.run, self.seconds = run_driver(
            "nvim", ["nvim", "--headless", "--clean", "-c", f"luafile {driver}"], self.workdir,
            config, TIMEOUT_MS, XDG_STATE_HOME=self.workdir, XDG_CACHE_HOME=self.workdir)
        if not self.run.get("ok"):
            raise Failure(f"the Lua driver failed: {self.run.get('error')}; "
                          f"nvim's stderr {r.stderr[-2000:]!r}")
        print(f"     nvim ran {self.seconds:.2f} s: initialization "
              f"{self.run['initialize_ms']:.0f} ms, completions "
              f"{self.run['story']['ms']:.1f}, {self.run['in_fence']['ms']:.1f}, "
              f"{self.run['after_fence']['ms']:.1f} ms")

    def need_run(self):
        if self.run is None or not self.run.get("ok"):
            raise Failure("no result: Neovim's run failed (above)")
        return self.run

    def capabilities(self):
        caps = self.need_run()["capabilities"]
        if caps.get("positionEncoding", "utf-16") != "utf-16":
            raise Failure(f"positionEncoding {caps.get('positionEncoding')!r}, Neovim 0.7 offers "
                          "only utf-16")
        check_sync_and_provider(caps, caps)
        if self.run["offset_encoding"] != "utf-16":
            raise Failure(f"Neovim chose the offset encoding {self.run['offset_encoding']!r}")

    def story(self):
        answer = self.need_run()["story"]
        check_time_item(answer_result(answer, "'once upon a ti'"), 0, 12, 14,
                        f"'once upon a ti' (params {json.dumps(answer['params'])})")

    def omnifunc(self):
        value = self.need_run()["omnifunc"]
        if value != "v:lua.vim.lsp.omnifunc":
            raise Failure(f"the set-up left omnifunc={value!r} on the Markdown buffer")

    def fenced_code(self):
        run = self.need_run()
        if not run.get("same_client"):
            raise Failure("the second Markdown buffer got a second server")
        check_no_items(answer_result(run["in_fence"], "inside a fenced code block"),
                       "inside a fenced code block (line 1 of '```', 'once upon a ti', '```')")
        check_time_item(answer_result(run["after_fence"], "after the fenced block"), 3, 12, 14,
                        "after the fenced block (line 3)")


def main():
    nextword, model = arguments("usage: neovim_test.py BUILD/nextword DATA_DIR")
    skip_unless("nvim")
    with tempfile.TemporaryDirectory(prefix="nextword-neovim-") as workdir:
        checks = Checks(nextword, model, workdir)
        return run_checks("neovim_test", [
            ("Neovim runs docs/editors.md's set-up and the driver", checks.run_neovim),
            ("initialize: UTF-16, incremental sync, a completion provider", checks.capabilities),
            ("'once upon a ti': time first, textEdit (0,12)-(0,14)", checks.story),
            ("the set-up's omnifunc on the buffer", checks.omnifunc),
            ("a fenced code block: no items; after it, time", checks.fenced_code),
            ("docs/editors.md shows tests/editors/nextword.lua", lambda: check_doc_shows("nextword.lua")),
        ])


if __name__ == "__main__":
    sys.exit(main())
