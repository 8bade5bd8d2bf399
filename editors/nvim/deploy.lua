-- A plain-Lua set-up without plugins, for Neovim 0.7 and later: filetype detection,
-- highlighting (syntax/deploy.vim), buffer settings (ftplugin/deploy.lua: `//` comments),
-- and a language client for `deployfit lsp` with hover on `K` and completion through
-- 'omnifunc' (<C-x><C-o>). Source it from init.lua:
--   dofile('/path/to/deployfit/editors/nvim/deploy.lua')
-- Set vim.g.deployfit_cmd to use another binary: { '/path/to/deployfit', 'lsp' }.

-- This folder joins the runtimepath, so that syntax/ and ftplugin/ are found.
local here = debug.getinfo(1, 'S').source:sub(2):match('(.*)/')
if here and not vim.tbl_contains(vim.opt.runtimepath:get(), here) then
  vim.opt.runtimepath:append(here)
end

vim.cmd([[autocmd BufRead,BufNewFile *.deploy setfiletype deploy]])

local client_id = nil

-- What each attached buffer gets; Neovim 0.10 maps `K` to hover itself, 0.7-0.9 do not,
-- and none sets 'omnifunc' before 0.8's defaults.
local function attach(buffer)
  vim.bo[buffer].omnifunc = 'v:lua.vim.lsp.omnifunc'
  vim.api.nvim_buf_set_keymap(buffer, 'n', 'K', '<cmd>lua vim.lsp.buf.hover()<CR>', {
    noremap = true,
    silent = true,
  })
end

local function start(args)
  local buffer = args.buf
  -- Per buffer (the ftplugin sets it too, for set-ups that skip ftplugins).
  vim.bo[buffer].commentstring = '// %s'
  if client_id == nil or vim.lsp.get_client_by_id(client_id) == nil then
    client_id = vim.lsp.start_client({
      name = 'deployfit',
      cmd = vim.g.deployfit_cmd or { 'deployfit', 'lsp' },
      root_dir = vim.fn.getcwd(),
    })
  end
  if client_id ~= nil then
    vim.lsp.buf_attach_client(buffer, client_id)
    attach(buffer)
  end
end

vim.api.nvim_create_autocmd('FileType', { pattern = 'deploy', callback = start })
