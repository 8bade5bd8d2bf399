//! The typed syntax tree.
//!
//! Every node carries a byte span. Spans inside a [`Decl`] are relative to the start of
//! that declaration, so that editing one declaration leaves the others equal (and their
//! salsa queries backdated); [`crate::syntax::Parsed`] records where each one starts.

use crate::span::Span;
use crate::units::Quantity;

/// The kinds of declaration; each kind is its own namespace.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    salsa::SalsaValue,
    serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum DeclKind {
    Arch,
    Gpu,
    Model,
    Quant,
    Kv,
    Engine,
    Host,
    Offer,
    Rule,
    Deployment,
}

impl DeclKind {
    pub const ALL: [DeclKind; 10] = [
        DeclKind::Arch,
        DeclKind::Gpu,
        DeclKind::Model,
        DeclKind::Quant,
        DeclKind::Kv,
        DeclKind::Engine,
        DeclKind::Host,
        DeclKind::Offer,
        DeclKind::Rule,
        DeclKind::Deployment,
    ];

    pub fn keyword(self) -> &'static str {
        match self {
            DeclKind::Arch => "arch",
            DeclKind::Gpu => "gpu",
            DeclKind::Model => "model",
            DeclKind::Quant => "quant",
            DeclKind::Kv => "kv",
            DeclKind::Engine => "engine",
            DeclKind::Host => "host",
            DeclKind::Offer => "offer",
            DeclKind::Rule => "rule",
            DeclKind::Deployment => "deployment",
        }
    }

    pub fn from_keyword(text: &str) -> Option<DeclKind> {
        DeclKind::ALL
            .into_iter()
            .find(|kind| kind.keyword() == text)
    }

    /// How the kind reads in a sentence ("a GPU", "a KV-cache dtype").
    pub fn describe(self) -> &'static str {
        match self {
            DeclKind::Arch => "a GPU architecture",
            DeclKind::Gpu => "a GPU",
            DeclKind::Model => "a model",
            DeclKind::Quant => "a quantization",
            DeclKind::Kv => "a KV-cache dtype",
            DeclKind::Engine => "an engine",
            DeclKind::Host => "a host machine",
            DeclKind::Offer => "a cloud offer",
            DeclKind::Rule => "a rule",
            DeclKind::Deployment => "a deployment",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// One top-level item of a file.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Item {
    Import(Import),
    Decl(Decl),
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Import {
    pub path: String,
    pub path_span: Span,
    pub span: Span,
}

/// `KIND NAME [extends OTHER] { ... }` or `model NAME from "PATH or ID" [{ ... }]`, with
/// spans relative to the declaration's start.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Decl {
    pub kind: DeclKind,
    pub kind_span: Span,
    pub name: Ident,
    pub extends: Option<Ident>,
    /// `from "…"`: the entry extends the model a file or registry id describes. Without a
    /// block, `body` is empty with an empty span at the declaration's end.
    pub from: Option<StrLit>,
    pub doc: Option<String>,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Block {
    pub entries: Vec<Entry>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Entry {
    Field(Field),
    Nested(Nested),
    Require(Require),
    Objective(Objective),
}

impl Entry {
    pub fn span(&self) -> Span {
        match self {
            Entry::Field(field) => field.span,
            Entry::Nested(nested) => nested.span,
            Entry::Require(require) => require.span,
            Entry::Objective(objective) => objective.span,
        }
    }
}

/// `name = expr`
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Field {
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

/// `name { ... }` (`workload`, `files`)
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Nested {
    pub name: Ident,
    pub body: Block,
    pub span: Span,
}

/// `require EXPR [else "message"]`
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Require {
    pub cond: Expr,
    pub message: Option<StrLit>,
    pub span: Span,
}

/// `minimize EXPR` or `maximize EXPR`
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Objective {
    pub maximize: bool,
    pub expr: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum UnaryOp {
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum BinaryOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
}

impl BinaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Or => "or",
            BinaryOp::And => "and",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
        }
    }

    /// Binding strength, higher binds tighter; shared by the parser and the formatter.
    pub fn precedence(self) -> u8 {
        match self {
            BinaryOp::Or => 1,
            BinaryOp::And => 2,
            BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge => 4,
            BinaryOp::Add | BinaryOp::Sub => 5,
            BinaryOp::Mul | BinaryOp::Div => 6,
        }
    }

    pub fn is_comparison(self) -> bool {
        self.precedence() == 4
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ExprKind {
    /// A number or quantity literal; `text` is the source spelling, kept for the formatter.
    Literal {
        text: String,
        value: Quantity,
    },
    Str(StrLit),
    Name(String),
    /// `?`: any catalog entry of the field's kind.
    Hole,
    /// `one_of [a, b, c]`
    OneOf(Vec<Expr>),
    List(Vec<Expr>),
    Paren(Box<Expr>),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    Access(Box<Expr>, Ident),
    Call(Ident, Vec<Expr>),
}

/// A string literal: text pieces and `{expr}` interpolations.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StrLit {
    pub parts: Vec<StrPart>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum StrPart {
    Text(String),
    Interp(Expr),
}

impl StrLit {
    /// The literal's value when it has no interpolation.
    pub fn plain(&self) -> Option<String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                StrPart::Text(text) => out.push_str(text),
                StrPart::Interp(_) => return None,
            }
        }
        Some(out)
    }
}

impl Decl {
    /// The fields of the body, in order.
    pub fn fields(&self) -> impl Iterator<Item = &Field> {
        self.body.entries.iter().filter_map(|entry| match entry {
            Entry::Field(field) => Some(field),
            _ => None,
        })
    }

    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields().find(|field| field.name.name == name)
    }

    pub fn nested(&self, name: &str) -> Option<&Nested> {
        self.body.entries.iter().find_map(|entry| match entry {
            Entry::Nested(nested) if nested.name.name == name => Some(nested),
            _ => None,
        })
    }
}
