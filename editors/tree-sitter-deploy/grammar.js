/**
 * Tree-sitter grammar for deployfit's `.deploy` language: the surface syntax of
 * grammar/deploy.pest (the compiler's grammar is the reference; this one is for
 * highlighting, folding and text objects in Helix, Neovim and Zed).
 *
 * Differences, all on input the compiler rejects anyway: interpolations are parsed as
 * expressions here (the compiler parses their text in a second pass), and a unit is taken
 * after a number on the same line without checking that no letter follows it.
 */

const PREC = {
  or: 1,
  and: 2,
  not: 3,
  compare: 4,
  add: 5,
  mul: 6,
  neg: 7,
  access: 8,
};

const DIGITS = /[0-9](_?[0-9])*/;
const NUMBER = seq(DIGITS, optional(seq('.', DIGITS)), optional(seq(/[eE][+-]?/, DIGITS)));
const UNIT = choice(
  'GB/s', 'TB/s', 'GiB/s', 'MB/s', 'tok/s', 'tokens/s', 'req/s',
  'KiB', 'MiB', 'GiB', 'TiB', 'KB', 'MB', 'GB', 'TB', 'B',
  'TFLOPS', 'PFLOPS', 'GFLOPS', 'TOPS', 'tokens', 'tok', 'years', 'year', 'ms', 's', 'h', 'W', '%',
);

function commaSep(rule) {
  return optional(seq(rule, repeat(seq(',', rule)), optional(',')));
}

module.exports = grammar({
  name: 'deploy',

  // `;` separates entries as whitespace does.
  extras: $ => [/[ \t\r\n;]/, $.doc_comment, $.comment],

  word: $ => $.identifier,

  rules: {
    source_file: $ => repeat(choice($.import, $.declaration)),

    doc_comment: _ => token(prec(2, seq('///', /[^\n]*/))),
    comment: _ => token(prec(1, seq('//', /[^\n]*/))),

    import: $ => seq('import', field('path', $.string)),

    declaration: $ => seq(
      field('kind', $.kind),
      field('name', $.identifier),
      choice(
        field('body', $.block),
        seq('extends', field('parent', $.identifier), field('body', $.block)),
        seq('from', field('source', $.string), optional(field('body', $.block))),
      ),
    ),

    kind: _ => choice('arch', 'gpu', 'host', 'model', 'quant', 'kv', 'engine', 'rule', 'deployment', 'offer'),

    block: $ => seq('{', repeat(choice($.field, $.nested, $.require, $.objective)), '}'),

    field: $ => seq(field('name', $.identifier), '=', field('value', $._expression)),
    nested: $ => seq(field('name', $.identifier), field('body', $.block)),
    require: $ => seq('require', field('condition', $._expression), optional(seq('else', field('message', $.string)))),
    objective: $ => seq(choice('minimize', 'maximize'), field('objective', $._expression)),

    _expression: $ => choice(
      $.binary,
      $.not,
      $.negation,
      $.access,
      $.call,
      $.one_of,
      $.list,
      $.parenthesized,
      $.hole,
      $.quantity,
      $.money,
      $.string,
      $.boolean,
      $.identifier,
    ),

    binary: $ => choice(
      prec.left(PREC.or, seq(field('left', $._expression), 'or', field('right', $._expression))),
      prec.left(PREC.and, seq(field('left', $._expression), 'and', field('right', $._expression))),
      prec.left(PREC.compare, seq(field('left', $._expression), choice('==', '!=', '<', '<=', '>', '>='), field('right', $._expression))),
      prec.left(PREC.add, seq(field('left', $._expression), choice('+', '-'), field('right', $._expression))),
      prec.left(PREC.mul, seq(field('left', $._expression), choice('*', '/'), field('right', $._expression))),
    ),
    not: $ => prec(PREC.not, seq('not', $._expression)),
    negation: $ => prec(PREC.neg, seq('-', $._expression)),
    access: $ => prec(PREC.access, seq(field('object', $._expression), '.', field('field', $.identifier))),
    call: $ => seq(field('function', $.identifier), '(', commaSep($._expression), ')'),
    one_of: $ => seq('one_of', '[', commaSep($._expression), ']'),
    list: $ => seq('[', commaSep($._expression), ']'),
    parenthesized: $ => seq('(', $._expression, ')'),
    hole: _ => '?',

    // `32k`, `24 GiB`, `936.2 GB/s`, `90%`: a number, a binary suffix attached, and a unit
    // on the same line.
    quantity: _ => token(seq(NUMBER, optional(/[kM]/), optional(seq(/[ \t]*/, UNIT)))),
    money: _ => token(seq('$', NUMBER, optional(/[kM]/), optional(seq('/', choice('Mtok', 'kWh', 'h'))))),

    string: $ => seq(
      '"',
      repeat(choice($.string_content, $.escape_sequence, $.interpolation)),
      token.immediate('"'),
    ),
    string_content: _ => token.immediate(prec(1, /[^"\\{\n]+/)),
    escape_sequence: _ => token.immediate(/\\["\\n{}]/),
    interpolation: $ => seq(token.immediate('{'), $._expression, '}'),

    boolean: _ => choice('true', 'false'),
    identifier: _ => /[A-Za-z_][A-Za-z0-9_]*/,
  },
});
