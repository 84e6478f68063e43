//! Judging wall time: the 30 requests of a ten-criterion audit (10 criteria × 3 personas)
//! against a local OpenAI-compatible server that answers after 1 s, at max concurrency 30
//! and at 1.
//!
//! Run: `cargo bench --bench llm_concurrency` (or `cargo run --release --bench ...`).
//! Options (env): `BENCH_LATENCY_MS` (default 1000), `BENCH_CONCURRENCY` (default "30,1").
//!
//! Measured 2026-11-22 (2 shared cores, release): max_concurrency=30: 1.031 s wall, 30/30
//! valid opinions, 30 in flight; max_concurrency=1: 30.087 s wall, 30/30 valid, 1 in flight.

#[path = "../tests/llm_support/mod.rs"]
mod llm_support;

use auditor::model::Judge;
use llm_support::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    let latency = Duration::from_millis(
        std::env::var("BENCH_LATENCY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000),
    );
    let levels: Vec<usize> = std::env::var("BENCH_CONCURRENCY")
        .unwrap_or_else(|_| "30,1".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the tokio runtime: {e}");
            std::process::exit(1);
        }
    };
    rt.block_on(async {
        let rubric = rubric();
        let criteria: Vec<String> = rubric.dimensions.iter().map(|d| d.id.clone()).collect();
        let pack = Arc::new(pack());
        println!(
            "{} criteria x 3 personas = {} requests, server latency {} ms",
            criteria.len(),
            criteria.len() * 3,
            latency.as_millis()
        );
        for level in levels {
            let script = Script::new(vec![Step::AnswerAfter(latency)]);
            let arrivals = script.arrivals.clone();
            let server = server(script).await;
            let judges = judges(config(
                &server,
                &[
                    ("AUDITOR_MAX_CONCURRENCY", &level.to_string()),
                    ("AUDITOR_LLM_TIMEOUT", "120"),
                ],
            ));
            let reqs: Vec<_> = criteria
                .iter()
                .flat_map(|c| Judge::ALL.map(|j| request(j, c, pack.clone())))
                .collect();
            let t0 = Instant::now();
            let answers = futures::future::join_all(reqs.iter().map(|r| judges.judge(r))).await;
            let wall = t0.elapsed();
            let ok = reqs
                .iter()
                .zip(&answers)
                .filter(|(r, a)| {
                    a.as_ref().is_ok_and(|a| {
                        a.opinion.judge == r.persona && a.opinion.criterion_id == r.criterion_id
                    })
                })
                .count();
            let in_flight = max_in_window(
                &arrivals.lock().unwrap_or_else(|e| e.into_inner()),
                latency.mul_f64(0.9),
            );
            println!(
                "max_concurrency={level:>2}: wall {:>7.3} s, {ok}/{} valid opinions, max in flight {in_flight}",
                wall.as_secs_f64(),
                reqs.len()
            );
        }
    });
}
