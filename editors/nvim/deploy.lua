-- A plain-Lua set-up without plugins, for Neovim 0.7 and later: filetype detection and
-- a language client for `deployfit lsp`. Source it from init.lua:
--   dofile('/path/to/deployfit/editors/nvim/deploy.lua')
-- Set vim.g.deployfit_cmd to use another binary: { '/path/to/deployfit', 'lsp' }.

vim.cmd([[autocmd BufRead,BufNewFile *.deploy setfiletype deploy]])

local client_id = nil

local function start()
  if client_id == nil or vim.lsp.get_client_by_id(client_id) == nil then
    client_id = vim.lsp.start_client({
      name = 'deployfit',
      cmd = vim.g.deployfit_cmd or { 'deployfit', 'lsp' },
      root_dir = vim.fn.getcwd(),
    })
  end
  if client_id ~= nil then
    vim.lsp.buf_attach_client(0, client_id)
  end
end

vim.api.nvim_create_autocmd('FileType', { pattern = 'deploy', callback = start })
vim.bo.commentstring = '// %s'
