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
//!
//! **One rule for the exit code, whatever the timing.** A run's outcome is decided at one
//! instant, [`finish`], once the command's work is done (the report written): the signal thread
//! and [`finish`] take turns on one [`Gate`]. A signal that reaches the gate first makes the
//! run interrupted: [`finish`] then returns 130, even if the report was written meanwhile (the
//! CLI says so). A signal after [`finish`] changes nothing: the process exits with the run's
//! own code (a notice says the run was already complete; a second signal exits at once, with
//! that code). So stderr says "interrupted" exactly when the exit code is 130.

use std::sync::{Arc, Mutex, OnceLock};

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
static GATE: Gate = Gate::new();

/// Where a run stands with respect to signals; the signal thread and [`finish`] take turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    Interrupted,
    /// Finished with this exit code; the number of signals received since.
    Finished(i32, u32),
}

/// What a signal means, decided by the [`Gate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// The run is still going: it is now interrupted (the first signal, or a later one).
    Interrupts { first: bool },
    /// The run had finished with this code before the signal: it keeps its code.
    AfterFinish { code: i32, first: bool },
}

/// The one place where a signal and the end of a run are ordered.
#[derive(Debug)]
pub(crate) struct Gate(Mutex<Phase>);

impl Gate {
    pub(crate) const fn new() -> Self {
        Gate(Mutex::new(Phase::Running))
    }

    fn phase(&self) -> std::sync::MutexGuard<'_, Phase> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A signal arrived.
    pub(crate) fn signal(&self) -> Arrival {
        let mut phase = self.phase();
        match *phase {
            Phase::Running => {
                *phase = Phase::Interrupted;
                Arrival::Interrupts { first: true }
            }
            Phase::Interrupted => Arrival::Interrupts { first: false },
            Phase::Finished(code, seen) => {
                *phase = Phase::Finished(code, seen + 1);
                Arrival::AfterFinish {
                    code,
                    first: seen == 0,
                }
            }
        }
    }

    /// The run's work is done with `code`: the exit code it ends with (130 if a signal came
    /// first). Later calls return the first decision.
    pub(crate) fn finish(&self, code: i32) -> i32 {
        let mut phase = self.phase();
        match *phase {
            Phase::Running => {
                *phase = Phase::Finished(code, 0);
                code
            }
            Phase::Interrupted => crate::exit::INTERRUPTED,
            Phase::Finished(decided, _) => decided,
        }
    }
}

/// Decides the process's exit code once the command's work is done: `code`, or 130 if a
/// signal arrived first. Signals after this call no longer change the outcome.
pub fn finish(code: i32) -> i32 {
    GATE.finish(code)
}

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
                    match (GATE.signal(), on_second) {
                        (Arrival::Interrupts { first }, on_second) => {
                            counter.raise();
                            match (on_second, first) {
                                (OnSecond::Exit, true) => tracing::warn!(
                                    "interrupted: stopping the audit and flushing traces (press Ctrl-C again to quit at once)"
                                ),
                                (OnSecond::Exit, false) => {
                                    crate::telemetry::flush_before_exit();
                                    std::process::exit(crate::exit::INTERRUPTED);
                                }
                                (OnSecond::Count, _) => {}
                            }
                        }
                        (Arrival::AfterFinish { code, first: true }, _) => tracing::info!(
                            "Ctrl-C arrived after the run had finished: its outputs are complete; exiting with its code {code}"
                        ),
                        (Arrival::AfterFinish { code, first: false }, _) => {
                            crate::telemetry::flush_before_exit();
                            std::process::exit(code);
                        }
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

/// Runs blocking `work` on a thread of its own and awaits its result: a panic becomes `Err`
/// with its message. Unlike tokio's blocking pool (whose runtime waits for every blocking task
/// when it is dropped), the thread can be abandoned: when the awaiting future is dropped (the
/// first Ctrl-C drops the audit's actor system) the process goes on to exit with 130 at once,
/// and the thread ends with the process.
pub async fn off_thread<T: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ThreadError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let span = tracing::Span::current();
    std::thread::Builder::new()
        .name(format!("auditor-{name}"))
        .spawn(move || {
            let _entered = span.entered();
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            // The receiver is gone only when the caller stopped waiting (Ctrl-C): nobody to tell.
            let _ = tx.send(result.map_err(|p| ThreadError::Panicked(panic_text(p.as_ref()))));
        })
        .map_err(|source| ThreadError::Spawn {
            name: name.into(),
            source,
        })?;
    rx.await
        .unwrap_or_else(|_| Err(ThreadError::NoAnswer { name: name.into() }))
}

/// Why [`off_thread`] has no result.
#[derive(Debug, thiserror::Error)]
pub enum ThreadError {
    /// The work panicked: the panic's message.
    #[error("{0}")]
    Panicked(String),
    #[error("cannot start a thread for {name}: {source}")]
    Spawn {
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the thread of {name} stopped without an answer")]
    NoAnswer { name: String },
}

/// The message of a panic payload.
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        format!("panic: {s}")
    } else if let Some(s) = payload.downcast_ref::<String>() {
        format!("panic: {s}")
    } else {
        "panic".to_string()
    }
}

/// Runs blocking `work` on a thread of its own and waits for it, unless the first Ctrl-C (or
/// SIGTERM) comes first: then `None` at once, the work abandoned (it ends with the process).
/// For the commands that do their work outside an actor system (`calibrate`). Without
/// [`listen`] it simply waits.
pub fn unless_interrupted<T: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<Option<T>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name(format!("auditor-{name}"))
        .spawn(move || {
            let _ = tx.send(work());
        })?;
    loop {
        match rx.recv_timeout(std::time::Duration::from_millis(50)) {
            Ok(v) => return Ok(Some(v)),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if was_interrupted() => {
                return Ok(None);
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(std::io::Error::other(format!("{name} stopped (a panic)")));
            }
        }
    }
}

/// Testing only, absent from release binaries (compiled with debug assertions only):
/// `AUDITOR_TEST_STALL=WHAT:FILE` makes the blocking work named WHAT (`calibrate`,
/// `RepoInvestigator`) create `FILE.started`, sleep 20 s, then create FILE, so a test can
/// signal the process once the work runs and tell that it left before the work ended.
#[cfg(debug_assertions)]
pub fn test_stall(what: &str) {
    let Ok(spec) = std::env::var("AUDITOR_TEST_STALL") else {
        return;
    };
    if let Some((name, file)) = spec.split_once(':')
        && name == what
    {
        let _ = std::fs::write(format!("{file}.started"), what);
        std::thread::sleep(std::time::Duration::from_secs(20));
        let _ = std::fs::write(file, what);
    }
}

#[cfg(not(debug_assertions))]
pub fn test_stall(_what: &str) {}

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
    use crate::exit::{INCOMPLETE, INTERRUPTED, OK};

    #[test]
    fn a_signal_before_the_finish_makes_the_run_interrupted_whatever_its_code() {
        for code in [OK, INCOMPLETE] {
            let gate = Gate::new();
            assert_eq!(gate.signal(), Arrival::Interrupts { first: true });
            assert_eq!(gate.signal(), Arrival::Interrupts { first: false });
            assert_eq!(gate.finish(code), INTERRUPTED);
            assert_eq!(gate.finish(code), INTERRUPTED, "decided once");
        }
    }

    #[test]
    fn a_signal_after_the_finish_keeps_the_runs_code() {
        let gate = Gate::new();
        assert_eq!(gate.finish(INCOMPLETE), INCOMPLETE);
        assert_eq!(
            gate.signal(),
            Arrival::AfterFinish {
                code: INCOMPLETE,
                first: true
            }
        );
        assert_eq!(
            gate.signal(),
            Arrival::AfterFinish {
                code: INCOMPLETE,
                first: false
            }
        );
        assert_eq!(gate.finish(OK), INCOMPLETE, "decided once");
    }

    #[test]
    fn signal_and_finish_racing_on_threads_always_agree() {
        for _ in 0..200 {
            let gate = Arc::new(Gate::new());
            let signal = std::thread::spawn({
                let gate = gate.clone();
                move || gate.signal()
            });
            let code = gate.finish(OK);
            let arrival = signal.join().unwrap();
            match arrival {
                Arrival::Interrupts { first: true } => assert_eq!(code, INTERRUPTED),
                Arrival::AfterFinish {
                    code: c,
                    first: true,
                } => {
                    assert_eq!((code, c), (OK, OK))
                }
                other => panic!("{other:?}"),
            }
        }
    }

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
