-- Headless Neovim test: opens a .deploy file with a known error and checks that the
-- language server's diagnostic arrives and that hover returns the breakdown.
-- Run: DEPLOYFIT=/path/to/deployfit nvim --headless -u NONE -l? (0.7 has no -l):
--   nvim --headless -u NONE -c 'luafile editors/nvim/test/check.lua' FILE
local binary = os.getenv('DEPLOYFIT') or 'deployfit'
local file = os.getenv('DEPLOYFIT_FILE')
local repo = os.getenv('DEPLOYFIT_REPO') or '.'
vim.g.deployfit_cmd = { binary, 'lsp' }
-- What a user's Neovim has by default (`-u NONE` leaves them off).
vim.cmd('filetype plugin on')
vim.cmd('syntax on')
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
-- Highlighting without tree-sitter: `deployment` on line 1 is a kind keyword.
if vim.b.current_syntax ~= 'deploy' then
  fail('no deploy syntax: ' .. tostring(vim.b.current_syntax))
end
local group = vim.fn.synIDattr(vim.fn.synID(1, 1, 1), 'name')
if group ~= 'deployKind' then
  fail('`deployment` is highlighted as ' .. group)
end
-- `K` hovers and completion goes through the server.
if not string.find(vim.fn.maparg('K', 'n'), 'hover', 1, true) then
  fail('K is not mapped to hover: ' .. vim.fn.maparg('K', 'n'))
end
if vim.bo.omnifunc ~= 'v:lua.vim.lsp.omnifunc' then
  fail('omnifunc is ' .. vim.bo.omnifunc)
end
local completion = vim.lsp.buf_request_sync(buffer, 'textDocument/completion', {
  textDocument = { uri = vim.uri_from_bufnr(buffer) },
  position = { line = 3, character = 16 },
}, 20000)
local labels = {}
for _, response in pairs(completion or {}) do
  local items = response.result and (response.result.items or response.result) or {}
  for _, item in ipairs(items) do
    labels[#labels + 1] = item.label
  end
end
if not vim.tbl_contains(labels, 'rtx_3090') then
  fail('no rtx_3090 among ' .. #labels .. ' completions')
end
-- Every .deploy buffer gets `//` comments, the second one too.
vim.cmd('edit ' .. vim.fn.fnamemodify(file, ':h') .. '/second.deploy')
if vim.bo.commentstring ~= '// %s' then
  fail('a second buffer has commentstring ' .. vim.bo.commentstring)
end
io.stdout:write('OK: diagnostic, hover, highlighting, K, completion and comments in Neovim ' .. tostring(vim.version().major) .. '.' .. tostring(vim.version().minor) .. '\n')
vim.cmd('qall!')
