//! Words that agree with a number, for every text the tool writes (detectives, judges, the
//! report). Imports nothing.

/// `n` with the singular or plural noun: `count(1, "criterion", "criteria")` → "1 criterion".
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", form(n, one, many))
}

/// The word that agrees with `n`: `form(1, "returns", "return")` → "returns".
pub fn form<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}
