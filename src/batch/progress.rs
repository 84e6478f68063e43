//! Progress of a batch: live counters ([`Stats`]) updated by the runner and the cache wrapper,
//! shown as indicatif bars on a terminal, or as plain periodic log lines on stderr otherwise.

use std::cell::Cell;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Live counters of one batch run (single-threaded: the actix System's thread).
#[derive(Debug, Default)]
pub struct Stats {
    pub total: Cell<u64>,
    pub done: Cell<u64>,
    pub failed: Cell<u64>,
    /// Done without any work in this run (finished in an earlier run).
    pub skipped: Cell<u64>,
    pub running: Cell<u64>,
    pub llm_in_flight: Cell<u64>,
    pub llm_asked: Cell<u64>,
    pub cache_hits: Cell<u64>,
    pub input_tokens: Cell<u64>,
    /// Of `input_tokens`, those read from the provider's prompt cache.
    pub cached_input_tokens: Cell<u64>,
    pub output_tokens: Cell<u64>,
    /// The judges are the offline rules: no LLM figure is shown (nothing is sent to a model).
    pub offline: Cell<bool>,
}

fn inc(c: &Cell<u64>, by: u64) {
    c.set(c.get().saturating_add(by));
}

impl Stats {
    pub fn request_started(&self) {
        inc(&self.llm_in_flight, 1);
        inc(&self.llm_asked, 1);
    }

    pub fn request_finished(&self, usage: Option<crate::model::TokenUsage>) {
        self.llm_in_flight
            .set(self.llm_in_flight.get().saturating_sub(1));
        if let Some(u) = usage {
            inc(&self.input_tokens, u.input_tokens);
            inc(&self.cached_input_tokens, u.cached_input_tokens);
            inc(&self.output_tokens, u.output_tokens);
        }
    }

    pub fn cache_hit(&self) {
        inc(&self.cache_hits, 1);
    }

    pub fn started(&self) {
        inc(&self.running, 1);
    }

    /// A submission started but handed back (another worker holds it): no longer running,
    /// neither done nor failed.
    pub fn set_aside(&self) {
        self.running.set(self.running.get().saturating_sub(1));
    }

    pub fn finished(&self, ok: bool, skipped: bool) {
        self.running.set(self.running.get().saturating_sub(1));
        if ok {
            inc(&self.done, 1);
        } else {
            inc(&self.failed, 1);
        }
        if skipped {
            inc(&self.skipped, 1);
        }
    }

    pub fn remaining(&self) -> u64 {
        self.total
            .get()
            .saturating_sub(self.done.get() + self.failed.get())
    }

    /// One plain-text status line.
    pub fn line(&self, elapsed: Duration, eta: Option<Duration>) -> String {
        let eta = eta
            .map(|d| format!(", ETA {}", human(d)))
            .unwrap_or_default();
        format!(
            "batch: {}/{} done ({} from earlier runs), {} failed, {} remaining, {} running; {}; elapsed {}{eta}",
            self.done.get(),
            self.total.get(),
            self.skipped.get(),
            self.failed.get(),
            self.remaining(),
            self.running.get(),
            self.llm_line(),
            human(elapsed),
        )
    }

    /// What the judges' requests stand at: the LLM figures, or that none are sent.
    fn llm_line(&self) -> String {
        if self.offline.get() {
            return "judges: offline rules, nothing sent to a model".into();
        }
        format!(
            "LLM: {} in flight, {} asked, {} cache hits, tokens {} in ({} cached) / {} out",
            self.llm_in_flight.get(),
            self.llm_asked.get(),
            self.cache_hits.get(),
            self.input_tokens.get(),
            self.cached_input_tokens.get(),
            self.output_tokens.get()
        )
    }
}

/// `1h02m`, `3m05s`, `42s`.
pub fn human(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// ETA from the submissions worked on in this run (skipped ones excluded: they took no time).
pub fn eta(stats: &Stats, elapsed: Duration) -> Option<Duration> {
    let worked = (stats.done.get() + stats.failed.get()).saturating_sub(stats.skipped.get());
    let remaining = stats.remaining();
    if worked == 0 || remaining == 0 {
        return None;
    }
    Some(elapsed.mul_f64(remaining as f64 / worked as f64))
}

/// How progress is shown.
pub enum Display {
    Bars {
        bar: indicatif::ProgressBar,
        llm: indicatif::ProgressBar,
        _multi: indicatif::MultiProgress,
    },
    Lines {
        every: Duration,
        last: Cell<Instant>,
    },
    Quiet,
}

impl Display {
    /// Bars when stderr is a terminal, else plain lines every `every`.
    pub fn auto(total: u64, every: Duration, quiet: bool) -> Display {
        if quiet {
            return Display::Quiet;
        }
        if std::io::stderr().is_terminal() {
            let multi = indicatif::MultiProgress::new();
            let style = indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:40.cyan/blue} {pos}/{len} submissions {msg} ETA {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
            let bar = multi.add(indicatif::ProgressBar::new(total).with_style(style));
            let llm = multi.add(indicatif::ProgressBar::new_spinner());
            bar.enable_steady_tick(Duration::from_millis(200));
            Display::Bars {
                bar,
                llm,
                _multi: multi,
            }
        } else {
            Display::Lines {
                every,
                last: Cell::new(Instant::now()),
            }
        }
    }

    /// Refreshes the display (cheap; call it often).
    pub fn update(&self, stats: &Stats, started: Instant, force: bool) {
        match self {
            Display::Bars { bar, llm, .. } => {
                bar.set_position(stats.done.get() + stats.failed.get());
                bar.set_message(format!(
                    "({} failed, {} running)",
                    stats.failed.get(),
                    stats.running.get()
                ));
                llm.set_message(stats.llm_line());
                llm.tick();
            }
            Display::Lines { every, last } => {
                if force || last.get().elapsed() >= *every {
                    last.set(Instant::now());
                    let elapsed = started.elapsed();
                    eprintln!("{}", stats.line(elapsed, eta(stats, elapsed)));
                }
            }
            Display::Quiet => {}
        }
    }

    /// Prints a message without breaking the bars.
    pub fn println(&self, msg: &str) {
        match self {
            Display::Bars { bar, .. } => bar.println(msg),
            Display::Lines { .. } => eprintln!("{msg}"),
            Display::Quiet => {}
        }
    }

    pub fn finish(&self) {
        if let Display::Bars { bar, llm, .. } = self {
            bar.finish();
            llm.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_eta() {
        let s = Stats::default();
        s.total.set(10);
        assert_eq!(eta(&s, Duration::from_secs(5)), None);
        s.started();
        s.finished(true, true);
        s.started();
        s.finished(true, false);
        s.started();
        s.finished(false, false);
        s.request_started();
        s.request_finished(Some(crate::model::TokenUsage {
            input_tokens: 5,
            output_tokens: 2,
            cached_input_tokens: 3,
        }));
        // two worked on in 20 s, seven remaining
        assert_eq!(
            eta(&s, Duration::from_secs(20)),
            Some(Duration::from_secs(70))
        );
        let line = s.line(Duration::from_secs(20), Some(Duration::from_secs(70)));
        assert!(
            line.contains("2/10 done (1 from earlier runs), 1 failed, 7 remaining"),
            "{line}"
        );
        assert!(line.contains("tokens 5 in (3 cached) / 2 out"), "{line}");
        assert!(line.contains("ETA 1m10s"), "{line}");
        assert_eq!(human(Duration::from_secs(3725)), "1h02m");
    }
}
