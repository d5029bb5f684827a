-- nextword as predictive text in Neovim 0.7 and later (init.lua):
-- one server for every prose buffer, completion with Ctrl-X Ctrl-O.
local nextword -- the client's id

vim.api.nvim_create_autocmd('FileType', {
  pattern = { 'markdown', 'text', 'gitcommit', 'mail' },
  callback = function(args)
    if not (nextword and vim.lsp.get_client_by_id(nextword)) then
      nextword = vim.lsp.start_client({
        name = 'nextword',
        cmd = { 'nextword', 'lsp' },
        on_attach = function(_, bufnr)
          -- scheduled: after the filetype plugins, which set an omnifunc of their own
          vim.schedule(function()
            vim.bo[bufnr].omnifunc = 'v:lua.vim.lsp.omnifunc'
          end)
        end,
      })
    end
    vim.lsp.buf_attach_client(args.buf, nextword)
  end,
})
