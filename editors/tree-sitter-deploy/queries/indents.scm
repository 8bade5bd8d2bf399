; Indent inside blocks and lists (Helix and nvim-treesitter indent queries).
(block "}" @end) @indent
(list "]" @end) @indent
(one_of "]" @end) @indent
