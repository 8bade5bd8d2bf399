-- Headless Neovim test: opens a .deploy file with a known error and checks that the
-- language server's diagnostic arrives and that hover returns the breakdown.
-- Run: DEPLOYFIT=/path/to/deployfit nvim --headless -u NONE -l? (0.7 has no -l):
--   nvim --headless -u NONE -c 'luafile editors/nvim/test/check.lua' FILE
local binary = os.getenv('DEPLOYFIT') or 'deployfit'
local file = os.getenv('DEPLOYFIT_FILE')
local repo = os.getenv('DEPLOYFIT_REPO') or '.'
vim.g.deployfit_cmd = { binary, 'lsp' }
dofile(repo .. '/editors/nvim/deploy.lua')

local function fail(message)
  io.stderr:write('FAIL: ' .. message .. '\n')
  vim.cmd('cquit 1')
end

vim.cmd('edit ' .. file)
local buffer = vim.api.nvim_get_current_buf()

-- Diagnostics: wait for the server's publishDiagnostics.
local ok = vim.wait(20000, function()
  return #vim.diagnostic.get(buffer) > 0
end, 50)
if not ok then
  fail('no diagnostic from the server')
end
local found = false
for _, d in ipairs(vim.diagnostic.get(buffer)) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
  if code == 'deploy::name::unknown' then
    found = true
  end
end
if not found then
  fail('no deploy::name::unknown diagnostic')
end

-- Hover on the second deployment's name (line 7, column 12): the breakdown.
local params = {
  textDocument = { uri = vim.uri_from_bufnr(buffer) },
  position = { line = 6, character = 12 },
}
local responses = vim.lsp.buf_request_sync(buffer, 'textDocument/hover', params, 20000)
local text = ''
for _, response in pairs(responses or {}) do
  if response.result and response.result.contents then
    text = text .. (response.result.contents.value or '')
  end
end
if not string.find(text, 'KV cache', 1, true) then
  fail('hover did not return the breakdown: ' .. text)
end
io.stdout:write('OK: diagnostic and hover from deployfit lsp\n')
vim.cmd('qall!')
