//! Lines for the user on stdout that never panic: a closed stdout (`auditor … | head -1`) must not
//! turn a finished run into a crash. A failed write is dropped; the report files and the exit code
//! still say what happened. Imports nothing.

use std::io::Write;

/// Writes one line to stdout, ignoring a closed or failing stdout (EPIPE).
pub fn line(args: std::fmt::Arguments) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_fmt(args).and_then(|()| out.write_all(b"\n"));
}

/// `println!` that never panics: `console::say!("Report: {}", path.display())`.
macro_rules! say {
    () => {
        $crate::console::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::console::line(format_args!($($arg)*))
    };
}

pub(crate) use say;
