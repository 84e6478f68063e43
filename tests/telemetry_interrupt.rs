//! Ctrl-C: the run is stopped, its open spans end and are flushed to the collector, and the
//! process exits with 130. The test re-runs itself as a child process shaped like the CLI
//! (init, interrupt handler, an actix system whose work never finishes, guard dropped before
//! exit) and sends it SIGINT.
#![cfg(unix)]

mod telemetry_support;

use auditor::telemetry::{self, LogFormat, LogOptions, TelemetryConfig};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use telemetry_support::*;
use tracing::Instrument;

const CHILD_ENV: &str = "AUDITOR_TEST_INTERRUPT_CHILD";
const TEST_NAME: &str = "ctrl_c_ends_open_spans_and_flushes_them";

/// The child: what `cli::main` does, with work that only Ctrl-C can stop.
fn child() -> ! {
    let cfg = TelemetryConfig::from_env(LogOptions {
        verbose: 0,
        quiet: false,
        format: LogFormat::Text,
    })
    .expect("telemetry config");
    let guard = telemetry::init(&cfg).expect("telemetry init");
    auditor::interrupt::listen(auditor::interrupt::OnSecond::Exit).expect("signal handler");
    let system = actix::System::new();
    let interrupted = system.block_on(async {
        let work = async {
            tracing::info_span!(target: "auditor::actors::coordinator", "finished_step")
                .in_scope(|| tracing::info!(target: "auditor::actors::coordinator", "done"));
            println!("READY");
            let _ = std::io::stdout().flush();
            std::future::pending::<()>().await;
        }
        .instrument(tracing::info_span!(
            target: "auditor::actors::coordinator",
            "audit",
            submission = "interrupted"
        ));
        tokio::select! {
            _ = work => false,
            _ = auditor::interrupt::interrupted() => true,
        }
    });
    drop(system);
    drop(guard);
    std::process::exit(if interrupted {
        auditor::exit::INTERRUPTED
    } else {
        0
    });
}

#[test]
fn ctrl_c_ends_open_spans_and_flushes_them() {
    if std::env::var_os(CHILD_ENV).is_some() {
        child();
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let server = otlp_receiver().await;
        let mut child = Command::new(std::env::current_exe().expect("test binary"))
            .args(["--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, "1")
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", server.uri())
            .env_remove("RUST_LOG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn child");
        let pid = child.id();
        let stdout = child.stdout.take().expect("stdout");
        let ready = tokio::task::spawn_blocking(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .any(|l| l.contains("READY"))
        })
        .await
        .expect("join");
        assert!(ready, "the child never got ready");

        let killed = Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status()
            .expect("kill");
        assert!(killed.success());

        let started = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait") {
                break s;
            }
            if started.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                panic!("the child did not exit after Ctrl-C");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let mut stderr = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
        }
        assert_eq!(status.code(), Some(130), "stderr:\n{stderr}");
        assert!(stderr.contains("interrupted"), "stderr:\n{stderr}");

        let (spans, _) = received_spans(&server).await;
        let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
        assert!(names.contains(&"finished_step"), "{names:?}");
        // The audit span was still open when Ctrl-C came: it ended when the graph was
        // dropped, and was flushed before exit.
        let audit = spans
            .iter()
            .find(|s| s.name == "audit")
            .unwrap_or_else(|| panic!("open audit span not exported: {names:?}"));
        assert_eq!(audit.str("submission"), Some("interrupted"));
    });
}
