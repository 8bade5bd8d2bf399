" Vim syntax for deployfit's .deploy files, for Neovim and Vim without tree-sitter (Neovim
" 0.7 highlights with this; tree-sitter's queries are in editors/tree-sitter-deploy).
if exists('b:current_syntax')
  finish
endif

syn keyword deployKind deployment gpu model quant kv engine host offer rule arch workload owned speculative
syn keyword deployKeyword import extends require else minimize maximize one_of from
syn keyword deployOperator and or not
syn keyword deployBoolean true false
syn match deployHole "?"
syn match deployNumber "\<\d[0-9_]*\(\.\d\+\)\?\([eE][+-]\?\d\+\)\?\>"
syn match deployQuantity "\<\d[0-9_]*\(\.\d\+\)\?\s*\(GiB\|MiB\|KiB\|TiB\|GB\|MB\|KB\|TB\|B\|GB/s\|TB/s\|MB/s\|GiB/s\|TFLOPS\|GFLOPS\|PFLOPS\|TOPS\|tok/s\|tokens/s\|req/s\|tokens\|tok\|ms\|s\|min\|h\|W\|k\|M\|%\)\>"
syn match deployPrice "\$\d[0-9_.]*\(/h\|/kWh\|/Mtok\)\?"
syn match deployField "\<[A-Za-z_][A-Za-z0-9_]*\>\ze\s*=[^=]"
syn region deployString start=+"+ skip=+\\\\\|\\"+ end=+"+ oneline
syn match deployComment "//.*$" contains=@Spell
syn match deployDocComment "///.*$" contains=@Spell

hi def link deployKind Structure
hi def link deployKeyword Keyword
hi def link deployOperator Operator
hi def link deployBoolean Boolean
hi def link deployHole Special
hi def link deployNumber Number
hi def link deployQuantity Number
hi def link deployPrice Number
hi def link deployField Identifier
hi def link deployString String
hi def link deployComment Comment
hi def link deployDocComment SpecialComment

let b:current_syntax = 'deploy'
