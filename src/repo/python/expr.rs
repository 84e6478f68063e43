//! A small, owned model of the Python expressions the analysis needs to evaluate (edge
//! endpoints, loop iterables, router returns, reducers, call arguments). Built from the
//! tree-sitter CST by [`super::syntax`]; evaluated by [`super::names`].

use serde::{Deserialize, Serialize};

/// A Python expression, reduced to what static evaluation can use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Expr {
    /// A string literal (concatenations joined). `fstring` when it has interpolations.
    Str {
        value: String,
        fstring: bool,
    },
    Num(String),
    Bool(bool),
    None,
    Name(String),
    Attr(Box<Expr>, String),
    Call {
        func: Box<Expr>,
        args: Vec<Expr>,
        kwargs: Vec<(String, Expr)>,
    },
    /// List, tuple or set display.
    List(Vec<Expr>),
    Dict(Vec<(Expr, Expr)>),
    /// `[elt for vars in iter]` (first `for` clause only).
    Comp {
        elt: Box<Expr>,
        vars: Vec<String>,
        iter: Box<Expr>,
    },
    /// `a if cond else b`: either alternative.
    Alt(Vec<Expr>),
    BinOp {
        op: String,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    Subscript(Box<Expr>, Vec<Expr>),
    Lambda(Box<Expr>),
    /// Anything else, as (truncated) source text.
    Other(String),
}

impl Expr {
    /// `a.b.c` for a chain of names and attributes.
    pub fn dotted(&self) -> Option<String> {
        match self {
            Expr::Name(n) => Some(n.clone()),
            Expr::Attr(obj, attr) => obj.dotted().map(|o| format!("{o}.{attr}")),
            _ => None,
        }
    }

    /// The literal string value, if this is a plain (non-f) string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Expr::Str {
                value,
                fstring: false,
            } => Some(value),
            _ => None,
        }
    }

    /// A short human-readable rendering (for schemas, reducers, notes).
    pub fn render(&self) -> String {
        match self {
            Expr::Str { value, fstring } => {
                if *fstring {
                    format!("f{value:?}")
                } else {
                    format!("{value:?}")
                }
            }
            Expr::Num(n) => n.clone(),
            Expr::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            Expr::None => "None".into(),
            Expr::Name(n) => n.clone(),
            Expr::Attr(o, a) => format!("{}.{a}", o.render()),
            Expr::Call { func, args, .. } => {
                let a: Vec<String> = args.iter().map(Expr::render).collect();
                format!("{}({})", func.render(), a.join(", "))
            }
            Expr::List(items) => {
                let a: Vec<String> = items.iter().map(Expr::render).collect();
                format!("[{}]", a.join(", "))
            }
            Expr::Dict(pairs) => {
                let a: Vec<String> = pairs
                    .iter()
                    .map(|(k, v)| format!("{}: {}", k.render(), v.render()))
                    .collect();
                format!("{{{}}}", a.join(", "))
            }
            Expr::Comp { elt, vars, iter } => {
                format!(
                    "[{} for {} in {}]",
                    elt.render(),
                    vars.join(", "),
                    iter.render()
                )
            }
            Expr::Alt(alts) => {
                let a: Vec<String> = alts.iter().map(Expr::render).collect();
                a.join(" | ")
            }
            Expr::BinOp { op, left, right } => {
                format!("{} {op} {}", left.render(), right.render())
            }
            Expr::Subscript(v, items) => {
                let a: Vec<String> = items.iter().map(Expr::render).collect();
                format!("{}[{}]", v.render(), a.join(", "))
            }
            Expr::Lambda(_) => "lambda".into(),
            Expr::Other(t) => t.clone(),
        }
    }

    /// True when the expression builds a string at run time (f-string, `+`, `%`, `.format`).
    pub fn is_built_string(&self) -> bool {
        match self {
            Expr::Str { fstring, .. } => *fstring,
            Expr::BinOp { op, left, right } => {
                (op == "+" || op == "%")
                    && (matches!(**left, Expr::Str { .. })
                        || matches!(**right, Expr::Str { .. })
                        || left.is_built_string()
                        || right.is_built_string())
            }
            Expr::Call { func, .. } => {
                matches!(&**func, Expr::Attr(obj, m) if m == "format" && matches!(**obj, Expr::Str { .. }))
                    || matches!(&**func, Expr::Attr(obj, m) if m == "join" && matches!(**obj, Expr::Str { .. }))
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Expr {
        Expr::Str {
            value: v.into(),
            fstring: false,
        }
    }

    #[test]
    fn dotted_joins_names_and_attributes() {
        let e = Expr::Attr(Box::new(Expr::Name("os".into())), "system".into());
        assert_eq!(e.dotted().as_deref(), Some("os.system"));
        assert_eq!(s("x").dotted(), None);
    }

    #[test]
    fn built_strings_are_recognised() {
        let f = Expr::Str {
            value: "git clone {url}".into(),
            fstring: true,
        };
        assert!(f.is_built_string());
        let plus = Expr::BinOp {
            op: "+".into(),
            left: Box::new(s("git clone ")),
            right: Box::new(Expr::Name("url".into())),
        };
        assert!(plus.is_built_string());
        assert!(!s("ls").is_built_string());
        assert!(!Expr::Name("cmd".into()).is_built_string());
    }
}
