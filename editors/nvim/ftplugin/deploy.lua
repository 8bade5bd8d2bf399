-- Buffer settings for every .deploy buffer (Neovim 0.7+): `//` comments, four-space indent.
vim.bo.commentstring = '// %s'
vim.bo.comments = ':///,://'
vim.bo.expandtab = true
vim.bo.shiftwidth = 4
vim.bo.softtabstop = 4
