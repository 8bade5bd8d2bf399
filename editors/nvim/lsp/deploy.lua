-- nvim-lspconfig's current style (Neovim 0.11+): put this file on your runtimepath as
-- lsp/deploy.lua, then `vim.lsp.enable('deploy')`.
return {
  cmd = { 'deployfit', 'lsp' },
  filetypes = { 'deploy' },
  root_markers = { '.git' },
}
