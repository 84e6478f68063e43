//! Ctrl-C and SIGTERM, one mechanism for every command.
//!
//! [`listen`] starts one thread that counts the signals (SIGINT and SIGTERM alike) into an
//! [`Interrupt`], observable from any runtime (the actix system included). What a signal does
//! is the command's choice ([`OnSecond`]):
//! - `auditor audit` / `evidence` ([`OnSecond::Exit`]): the first signal resolves
//!   [`interrupted`], so the CLI drops the actor graph (ending its spans), drops the telemetry
//!   guard (flushing them) and exits with [`crate::exit::INTERRUPTED`]; a second signal flushes
//!   what is finished and exits at once (e.g. when blocking work does not stop).
//! - `auditor batch` ([`OnSecond::Count`]): the first signal stops starting submissions, those
//!   in flight finish; the second stops at once. The batch writes its outputs either way.
//!
//! Without [`listen`] no handler is installed (the batch's evidence child ignores SIGINT) and
//! [`interrupted`] never resolves.

use std::sync::{Arc, OnceLock};

/// A count of interrupts. Cheap to clone; every clone sees the same count.
#[derive(Debug, Clone)]
pub struct Interrupt {
    tx: Arc<tokio::sync::watch::Sender<u32>>,
}

impl Default for Interrupt {
    /// A counter of its own, raised only by [`Interrupt::raise`].
    fn default() -> Self {
        Interrupt {
            tx: Arc::new(tokio::sync::watch::channel(0).0),
        }
    }
}

impl Interrupt {
    pub fn count(&self) -> u32 {
        *self.tx.borrow()
    }

    pub fn raise(&self) {
        self.tx.send_modify(|c| *c += 1);
    }

    /// Resolves once `n` interrupts have been raised.
    pub async fn reached(&self, n: u32) {
        let mut rx = self.tx.subscribe();
        let _ = rx.wait_for(|c| *c >= n).await;
    }
}

/// What the second signal does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnSecond {
    /// Flush the finished spans and exit with 130 at once (an audit: nothing to save).
    Exit,
    /// Only count it: the command stops what is in flight and writes what it has (a batch).
    Count,
}

/// Why signals cannot be listened for.
#[derive(Debug, thiserror::Error)]
#[error("cannot listen for Ctrl-C: {0}")]
pub struct InterruptError(#[from] std::io::Error);

static SIGNALS: OnceLock<Interrupt> = OnceLock::new();

/// Listens for Ctrl-C (and SIGTERM) on a dedicated thread from now on, and returns the
/// process's [`Interrupt`]. Idempotent: a second call returns the same count (and keeps the
/// first call's [`OnSecond`]).
pub fn listen(on_second: OnSecond) -> Result<Interrupt, InterruptError> {
    if let Some(i) = SIGNALS.get() {
        return Ok(i.clone());
    }
    let interrupt = Interrupt::default();
    if SIGNALS.set(interrupt.clone()).is_err() {
        return Ok(SIGNALS.get().cloned().unwrap_or(interrupt));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<std::io::Result<()>>();
    let counter = interrupt.clone();
    std::thread::Builder::new()
        .name("auditor-signals".into())
        .spawn(move || {
            runtime.block_on(async move {
                let mut signals = match Signals::new() {
                    Ok(s) => {
                        let _ = ready_tx.send(Ok(()));
                        s
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                loop {
                    signals.next().await;
                    counter.raise();
                    match (on_second, counter.count()) {
                        (OnSecond::Exit, 1) => tracing::warn!(
                            "interrupted: stopping the audit and flushing traces (press Ctrl-C again to quit at once)"
                        ),
                        (OnSecond::Exit, _) => {
                            crate::telemetry::flush_before_exit();
                            std::process::exit(crate::exit::INTERRUPTED);
                        }
                        (OnSecond::Count, _) => {}
                    }
                }
            })
        })?;
    match ready_rx.recv() {
        Ok(Ok(())) => Ok(interrupt),
        Ok(Err(e)) => Err(e.into()),
        Err(_) => Err(std::io::Error::other("the signal thread stopped").into()),
    }
}

/// Whether the first Ctrl-C (or SIGTERM) has arrived. Checked after the work too: a signal
/// that lands while the result is being produced must still win.
pub fn was_interrupted() -> bool {
    SIGNALS.get().is_some_and(|i| i.count() > 0)
}

/// Resolves when the user pressed Ctrl-C (never, if [`listen`] was not called). Works from
/// any runtime, including the actix system.
pub async fn interrupted() {
    match SIGNALS.get() {
        Some(i) => i.reached(1).await,
        None => std::future::pending::<()>().await,
    }
}

struct Signals {
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
}

impl Signals {
    #[cfg(unix)]
    fn new() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            int: signal(SignalKind::interrupt())?,
            term: signal(SignalKind::terminate())?,
        })
    }

    #[cfg(not(unix))]
    fn new() -> std::io::Result<Self> {
        Ok(Signals {})
    }

    #[cfg(unix)]
    async fn next(&mut self) {
        tokio::select! {
            _ = self.int.recv() => {}
            _ = self.term.recv() => {}
        }
    }

    #[cfg(not(unix))]
    async fn next(&mut self) {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_clone_sees_the_count_and_waiters_wake_at_their_number() {
        let a = Interrupt::default();
        let b = a.clone();
        let second = tokio::spawn({
            let b = b.clone();
            async move { b.reached(2).await }
        });
        a.raise();
        assert_eq!(b.count(), 1);
        assert!(!second.is_finished());
        b.raise();
        tokio::time::timeout(std::time::Duration::from_secs(5), second)
            .await
            .expect("woken at the second interrupt")
            .unwrap();
        assert_eq!(a.count(), 2);
        assert_eq!(
            Interrupt::default().count(),
            0,
            "a new counter starts at zero"
        );
    }
}
