; Highlights for .deploy files (Helix, Neovim's nvim-treesitter, Zed).
; Later patterns take precedence (tree-sitter 0.25, nvim-treesitter, Helix 25.01+), so the
; catch-all comes first.

(identifier) @variable

(doc_comment) @comment.documentation
(comment) @comment

(kind) @keyword
[
  "import"
  "extends"
  "from"
  "require"
  "else"
  "minimize"
  "maximize"
  "one_of"
] @keyword

[
  "and"
  "or"
  "not"
] @keyword.operator

[
  "=="
  "!="
  "<"
  "<="
  ">"
  ">="
  "+"
  "-"
  "*"
  "/"
  "="
] @operator

(declaration name: (identifier) @type.definition)
(declaration parent: (identifier) @type)
(field name: (identifier) @property)
(nested name: (identifier) @property)
(access field: (identifier) @property)
(call function: (identifier) @function.builtin)

(quantity) @number
(money) @number
(boolean) @constant.builtin
(hole) @constant.builtin

(string) @string
(escape_sequence) @string.escape
(interpolation
  "{" @punctuation.special
  "}" @punctuation.special)

[
  "{"
  "}"
  "["
  "]"
  "("
  ")"
] @punctuation.bracket
[
  ","
  "."
] @punctuation.delimiter

