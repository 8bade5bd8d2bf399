-- Filetype detection for .deploy files (Neovim 0.7+).
vim.cmd([[autocmd BufRead,BufNewFile *.deploy setfiletype deploy]])
