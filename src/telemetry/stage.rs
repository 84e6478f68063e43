//! Stage markers for a batch's evidence child: when announced ([`announce`], the child only),
//! each stage of the collection writes `auditor-stage: + WHAT` on stderr when it starts and
//! `auditor-stage: - WHAT` when it ends, so that a child the memory limit killed can be
//! described by its parent with what it was doing ("reading the PDF repo:report.pdf"), even
//! after an abort that runs no code. Elsewhere a stage costs one relaxed atomic load.

use std::sync::atomic::{AtomicBool, Ordering};

/// The prefix of a marker line.
pub const PREFIX: &str = "auditor-stage: ";

static ANNOUNCE: AtomicBool = AtomicBool::new(false);

/// Turns the markers on for this process (the evidence child).
pub fn announce() {
    ANNOUNCE.store(true, Ordering::Relaxed);
}

/// A stage in progress; its end is marked when dropped.
pub struct Stage(Option<String>);

/// Marks the start of a stage described by `what` (called only when markers are on).
pub fn enter(what: impl FnOnce() -> String) -> Stage {
    if !ANNOUNCE.load(Ordering::Relaxed) {
        return Stage(None);
    }
    let what = one_line(&what());
    eprintln!("{PREFIX}+ {what}");
    Stage(Some(what))
}

impl Drop for Stage {
    fn drop(&mut self) {
        if let Some(what) = &self.0 {
            eprintln!("{PREFIX}- {what}");
        }
    }
}

fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(300)
        .collect()
}

/// The stages started and not ended in `stderr` (oldest first), and the other lines.
pub fn in_progress(stderr: &str) -> (Vec<String>, Vec<&str>) {
    let mut open: Vec<String> = Vec::new();
    let mut rest = Vec::new();
    for line in stderr.lines() {
        match line.strip_prefix(PREFIX) {
            Some(m) => {
                if let Some(what) = m.strip_prefix("+ ") {
                    open.push(what.to_string());
                } else if let Some(what) = m.strip_prefix("- ")
                    && let Some(i) = open.iter().rposition(|o| o == what)
                {
                    open.remove(i);
                }
            }
            None => rest.push(line),
        }
    }
    (open, rest)
}

#[cfg(test)]
mod tests {
    #[test]
    fn stages_started_and_not_ended_are_in_progress() {
        let err = "auditor-stage: + reading the repository r\n\
                   auditor-stage: + reading the PDF p\n\
                   auditor-stage: - reading the repository r\n\
                   memory allocation of 64 bytes failed\n";
        let (open, rest) = super::in_progress(err);
        assert_eq!(open, ["reading the PDF p"]);
        assert_eq!(rest, ["memory allocation of 64 bytes failed"]);
    }
}
