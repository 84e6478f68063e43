//! Keys of a dict field of the state that nothing ever puts into it.
//!
//! A field such as `evidences: Annotated[dict, operator.ior]` holds only the keys that the
//! graph's input and the nodes' updates give it. When every one of those values can be read (the
//! input is a dict literal in every invocation of the graph, every update of the field is a dict
//! literal with literal keys or a re-send of its current value, and nothing in the repository
//! changes the field's dict in place), the keys it can ever hold are known: a read of another
//! key (`state.get("evidences", {}).get("general", [])`) always finds nothing, and a router's
//! route taken only when that read finds items can never be taken.
//!
//! Checked against real LangGraph (1.2.24): a dict field with a merging reducer starts as `{}`
//! when the input does not give it, and an update merges only the keys it holds.

use super::expr::Expr;
use super::names::Repo;
use regex::Regex;
use std::collections::BTreeSet;

/// What a dict field can hold, from what writes it.
pub struct Field<'a> {
    pub name: &'a str,
    /// The keys the input gives it (empty when the input does not give it).
    pub from_input: BTreeSet<String>,
    /// Each node that writes it, with the keys its updates give it.
    pub writers: Vec<(&'a str, BTreeSet<String>)>,
    /// Nodes that return the whole state (or a copy), re-sending the field's current value.
    pub resenders: Vec<&'a str>,
}

impl Field<'_> {
    /// Every key the field can ever hold.
    pub fn keys(&self) -> BTreeSet<&str> {
        self.from_input
            .iter()
            .chain(self.writers.iter().flat_map(|(_, ks)| ks))
            .map(String::as_str)
            .collect()
    }

    /// Why `key` is never in the field, said from what writes it.
    pub fn why_absent(&self, key: &str) -> String {
        format!(
            "is never set: nothing puts a `{key}` entry into `{}` ({})",
            self.name,
            self.sources()
        )
    }

    /// Why the field holds no key at all (when [`Field::keys`] is empty), said from what
    /// writes it.
    pub fn why_empty(&self) -> String {
        format!(
            "nothing ever puts an entry into `{}` ({})",
            self.name,
            self.sources()
        )
    }

    /// What gives the field its keys: the input, each node's writes, nothing in place.
    fn sources(&self) -> String {
        let quote = |ks: &BTreeSet<String>| -> String {
            ks.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let input = if self.from_input.is_empty() {
            "the graph's input gives it no key".to_string()
        } else {
            format!(
                "the graph's input gives it only {}",
                quote(&self.from_input)
            )
        };
        let nodes = if self.writers.is_empty() {
            "no node writes it".to_string()
                + &match self.resenders.as_slice() {
                    [] => String::new(),
                    [one] => format!(
                        " ({one} returns the whole state, which re-sends its current value)"
                    ),
                    many => format!(
                        " ({} return the whole state, which re-sends its current value)",
                        many.join(", ")
                    ),
                }
        } else {
            self.writers
                .iter()
                .map(|(n, ks)| {
                    if ks.is_empty() {
                        format!("{n} only re-sends its current value")
                    } else {
                        format!("{n} writes only {}", quote(ks))
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!("{input}; {nodes}; nothing changes it in place")
    }
}

/// Whether a reducer merges dict updates key by key (`operator.ior`, `operator.or_`).
pub fn merges(reducer: &str) -> bool {
    let r = reducer.rsplit('.').next().unwrap_or(reducer);
    matches!(r, "ior" | "or_")
}

/// Whether any module of the repository may change the dict of `field` in place:
/// `x["field"]["k"] = v`, `x["field"].update(..)`, `x.field.setdefault(..)`, or the same on a
/// local bound to the field's value. Read from the text, over-approximated (any object's
/// attribute or key of that name counts): a `true` only makes the analysis silent.
pub fn changed_in_place(repo: &Repo<'_>, field: &str) -> bool {
    let f = regex::escape(field);
    let read = format!(r#"(?:\.get\(\s*["']{f}["'][^)\n]*\)|\[\s*["']{f}["']\s*\]|\.{f}\b)"#);
    let mutate = r"\s*(?:\[[^\]\n]*\]\s*(?:=[^=]|\+=|\|=)|\.(?:update|setdefault|__setitem__|pop|popitem|clear)\(|\|=)";
    let (Ok(direct), Ok(alias)) = (
        Regex::new(&format!("{read}{mutate}")),
        Regex::new(&format!(
            r"(?m)^\s*(\w+)\s*(?::[^=\n]*)?=\s*[\w.]+{read}\s*$"
        )),
    ) else {
        return true;
    };
    repo.modules.iter().any(|m| {
        if direct.is_match(&m.source) {
            return true;
        }
        alias.captures_iter(&m.source).any(|c| {
            Regex::new(&format!(r"\b{}{mutate}", regex::escape(&c[1])))
                .map_or(true, |re| re.is_match(&m.source))
        })
    })
}

/// `p.get("field", ...).get("key", D)` (or `p["field"]`, `p.field` first) with `D` empty
/// (`[]`, `{}`, `None`, `""`, `0`, `False`, or no default): (field, key).
pub fn empty_sub_get(e: &Expr, p: &str) -> Option<(String, String)> {
    let Expr::Call { func, args, .. } = e else {
        return None;
    };
    let Expr::Attr(inner, m) = func.as_ref() else {
        return None;
    };
    if m != "get" {
        return None;
    }
    let key = args.first()?.as_str()?.to_string();
    if let Some(d) = args.get(1)
        && !is_empty_literal(d)
    {
        return None;
    }
    let field = match inner.as_ref() {
        Expr::Call { func, args, .. } => match func.as_ref() {
            Expr::Attr(obj, m) if m == "get" && matches!(obj.as_ref(), Expr::Name(n) if n == p) => {
                args.first()?.as_str()?.to_string()
            }
            _ => return None,
        },
        Expr::Subscript(obj, idx) if matches!(obj.as_ref(), Expr::Name(n) if n == p) => {
            idx.first()?.as_str()?.to_string()
        }
        Expr::Attr(obj, a) if matches!(obj.as_ref(), Expr::Name(n) if n == p) => a.clone(),
        _ => return None,
    };
    Some((field, key))
}

fn is_empty_literal(e: &Expr) -> bool {
    match e {
        Expr::List(items) => items.is_empty(),
        Expr::Dict(items) => items.is_empty(),
        Expr::None | Expr::Bool(false) => true,
        Expr::Num(n) => n == "0",
        Expr::Str { value, fstring } => value.is_empty() && !fstring,
        _ => false,
    }
}

/// The value of a condition (as written) when the expressions `is_v` recognises are empty
/// (an empty list, dict or string, or `None`): `Some(false)` for `v`, `any(.. in v)`,
/// `len(v)`, `len(v) > 0`, `v and ...`; `Some(true)` for `not v`, `all(.. in v)`,
/// `len(v) == 0`; `None` when it depends on anything else.
pub fn when_empty(cond: &str, is_v: &dyn Fn(&str) -> bool) -> Option<bool> {
    decide(cond, &|c| {
        if is_v(c) {
            return Some(false);
        }
        for (f, value) in [("any(", false), ("all(", true)] {
            if let Some(inner) = c.strip_prefix(f).and_then(|x| x.strip_suffix(')'))
                && let Some((_, iter)) = inner.rsplit_once(" in ")
                && inner.contains(" for ")
                && is_v(iter.trim())
            {
                return Some(value);
            }
        }
        has_items(c, is_v).flatten().map(|filled| !filled)
    })
}

/// The value of a condition (as written) when the expressions `is_v` recognises hold items,
/// each of them truthy (`["a"]`): `Some(true)` for `v`, `len(v)`, `len(v) > 0`,
/// `any(x for x in v)`, `all(x for x in v)`; `Some(false)` for `not v`, `len(v) == 0`;
/// `None` when it depends on anything else.
pub fn when_filled(cond: &str, is_v: &dyn Fn(&str) -> bool) -> Option<bool> {
    decide(cond, &|c| {
        if is_v(c) {
            return Some(true);
        }
        for f in ["any(", "all("] {
            // the items themselves, not something computed from them
            if let Some(inner) = c.strip_prefix(f).and_then(|x| x.strip_suffix(')'))
                && let Some((head, iter)) = inner.rsplit_once(" in ")
                && let Some((x, var)) = head.split_once(" for ")
                && x.trim() == var.trim()
                && is_v(iter.trim())
            {
                return Some(true);
            }
        }
        has_items(c, is_v).flatten()
    })
}

/// The value of a condition (as written) from the value `atom` gives each of its simple parts
/// (no `or`, `and` or `not`): an `or` is not decided; an `and` is false as soon as one part
/// is, else not decided; `not` negates. `not` binds tighter than `and`/`or`: those are split
/// first (outside parentheses).
fn decide(cond: &str, atom: &dyn Fn(&str) -> Option<bool>) -> Option<bool> {
    let c = strip_parens(cond.trim());
    if top_level(c, " or ").len() > 1 {
        return None;
    }
    let conjuncts = top_level(c, " and ");
    if conjuncts.len() > 1 {
        // false as soon as one conjunct is
        let parts: Vec<Option<bool>> = conjuncts.iter().map(|p| decide(p, atom)).collect();
        if parts.contains(&Some(false)) {
            return Some(false);
        }
        return None;
    }
    if let Some(rest) = c.strip_prefix("not ") {
        return decide(rest, atom).map(|b| !b);
    }
    atom(c)
}

/// For the length of what `is_v` recognises (`len(v)`), whether the condition holds when it
/// has items: `Some(true)` alone or compared `> 0`, `>= 1`, `!= 0`; `Some(false)` compared
/// `== 0`, `< 1`, `<= 0`; `None` compared otherwise. `None` for anything but such a length.
fn has_items(c: &str, is_v: &dyn Fn(&str) -> bool) -> Option<Option<bool>> {
    let rest = c.strip_prefix("len(")?;
    let close = rest.find(')')?;
    if !is_v(rest[..close].trim()) {
        return None;
    }
    let cmp = rest[close + 1..].trim();
    Some(
        match cmp.split_whitespace().collect::<Vec<_>>().as_slice() {
            [] | [">", "0"] | [">=", "1"] | ["!=", "0"] => Some(true),
            ["==", "0"] | ["<", "1"] | ["<=", "0"] => Some(false),
            _ => None,
        },
    )
}

/// `c` split at each `sep` outside parentheses and brackets.
fn top_level<'c>(c: &'c str, sep: &str) -> Vec<&'c str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let bytes = c.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ => {}
        }
        // byte-wise: `sep` is ASCII, so a match starts and ends on character boundaries
        if depth == 0 && bytes[i..].starts_with(sep.as_bytes()) {
            parts.push(&c[start..i]);
            i += sep.len();
            start = i;
            continue;
        }
        i += 1;
    }
    parts.push(&c[start..]);
    parts
}

fn strip_parens(c: &str) -> &str {
    let mut c = c;
    while let Some(inner) = c.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
        // only when the parentheses enclose the whole condition
        let mut depth = 0i32;
        let balanced = inner.chars().all(|ch| {
            match ch {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            depth >= 0
        });
        if !balanced || depth != 0 {
            break;
        }
        c = inner.trim();
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_over_an_empty_value() {
        let v = |t: &str| t == "evs";
        assert_eq!(when_empty("any(not e.found for e in evs)", &v), Some(false));
        assert_eq!(when_empty("all(e.found for e in evs)", &v), Some(true));
        assert_eq!(when_empty("evs", &v), Some(false));
        assert_eq!(when_empty("not evs", &v), Some(true));
        assert_eq!(when_empty("len(evs) > 0", &v), Some(false));
        assert_eq!(when_empty("len(evs) == 0", &v), Some(true));
        assert_eq!(when_empty("evs and x", &v), Some(false));
        assert_eq!(when_empty("evs or x", &v), None);
        assert_eq!(when_empty("x", &v), None);
        assert_eq!(when_empty("(len(evs))", &v), Some(false));
        // `not` binds tighter than `and`: (not evs) and x depends on x
        assert_eq!(when_empty("not evs and x", &v), None);
        assert_eq!(when_empty("not (evs and x)", &v), Some(true));
        assert_eq!(when_empty("évs and ß", &v), None);
    }

    #[test]
    fn conditions_over_a_value_with_truthy_items() {
        let v = |t: &str| t == "evs";
        assert_eq!(when_filled("evs", &v), Some(true));
        assert_eq!(when_filled("not evs", &v), Some(false));
        assert_eq!(when_filled("any(e for e in evs)", &v), Some(true));
        assert_eq!(when_filled("any(not e.found for e in evs)", &v), None);
        assert_eq!(when_filled("len(evs) > 0", &v), Some(true));
        assert_eq!(when_filled("len(evs) == 0", &v), Some(false));
        assert_eq!(when_filled("len(evs) > 1", &v), None);
        assert_eq!(when_filled("evs or x", &v), None);
        assert_eq!(when_filled("not evs and x", &v), Some(false));
    }
}
