//! One global concurrency limit for every LLM request of the run (judges and vision alike),
//! an optional requests-per-minute pacer, and token accounting.

use crate::model::TokenUsage;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// Shared by every clone of the LLM client: a permit is held for the duration of one HTTP
/// attempt (not across backoff sleeps, so a waiting retry never blocks a fresh request).
#[derive(Debug, Clone)]
pub struct Limiter {
    semaphore: Arc<Semaphore>,
    max: usize,
    pacer: Option<Arc<Pacer>>,
}

/// Spaces request starts at least `60 s / rpm` apart, so no minute ever sees more than `rpm`
/// starts.
#[derive(Debug)]
struct Pacer {
    interval: Duration,
    next: Mutex<Option<Instant>>,
}

impl Limiter {
    pub fn new(max_concurrency: usize, rpm: Option<u32>) -> Self {
        let max = max_concurrency.max(1);
        Limiter {
            semaphore: Arc::new(Semaphore::new(max)),
            max,
            pacer: rpm.filter(|r| *r > 0).map(|r| {
                Arc::new(Pacer {
                    interval: Duration::from_secs_f64(60.0 / f64::from(r)),
                    next: Mutex::new(None),
                })
            }),
        }
    }

    pub fn max_concurrency(&self) -> usize {
        self.max
    }

    /// Waits for a concurrency slot, then for the pacer's next start time.
    pub async fn acquire(&self) -> OwnedSemaphorePermit {
        let permit = match self.semaphore.clone().acquire_owned().await {
            Ok(p) => p,
            // The semaphore is never closed; a closed one would be a bug, so fail loudly.
            Err(_) => unreachable!("LLM limiter semaphore closed"),
        };
        if let Some(p) = &self.pacer {
            let start = {
                let mut next = p.next.lock().unwrap_or_else(|e| e.into_inner());
                let now = Instant::now();
                let start = next.map_or(now, |n| n.max(now));
                *next = Some(start + p.interval);
                start
            };
            tokio::time::sleep_until(start).await;
        }
        permit
    }
}

/// Token usage by persona and criterion, for the run metadata.
#[derive(Debug, Clone, Default)]
pub struct UsageLedger {
    inner: Arc<Mutex<BTreeMap<(String, String), TokenUsage>>>,
}

impl UsageLedger {
    /// Records the usage of one request. `who` is a persona name or `VisionInspector`.
    pub fn record(&self, who: &str, criterion: &str, usage: TokenUsage) {
        let mut map = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        map.entry((who.to_string(), criterion.to_string()))
            .or_default()
            .add(usage);
    }

    pub fn total(&self) -> TokenUsage {
        let map = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mut t = TokenUsage::default();
        map.values().for_each(|u| t.add(*u));
        t
    }

    /// Keyed by the user each request was recorded for (a persona, `VisionInspector`, ...).
    pub fn by_persona(&self) -> BTreeMap<String, TokenUsage> {
        self.group(|(who, _)| who.clone())
    }

    pub fn by_criterion(&self) -> BTreeMap<String, TokenUsage> {
        self.group(|(_, c)| c.clone())
    }

    /// The usage recorded for `user`.
    pub fn for_user(&self, user: &str) -> TokenUsage {
        self.by_persona().get(user).copied().unwrap_or_default()
    }

    fn group(&self, key: impl Fn(&(String, String)) -> String) -> BTreeMap<String, TokenUsage> {
        let map = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: BTreeMap<String, TokenUsage> = BTreeMap::new();
        for (k, u) in map.iter() {
            out.entry(key(k)).or_default().add(*u);
        }
        out
    }
}

/// Optional prices (per million tokens) to turn usage into cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
}

impl Price {
    pub fn cost(&self, usage: TokenUsage) -> f64 {
        usage.input_tokens as f64 * self.input_per_mtok / 1e6
            + usage.output_tokens as f64 * self.output_per_mtok / 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn concurrency_is_bounded() {
        let limiter = Limiter::new(2, None);
        let a = limiter.acquire().await;
        let _b = limiter.acquire().await;
        let third = tokio::time::timeout(Duration::from_millis(50), limiter.acquire()).await;
        assert!(
            third.is_err(),
            "a third permit was granted with a limit of 2"
        );
        drop(a);
        let third = tokio::time::timeout(Duration::from_millis(50), limiter.acquire()).await;
        assert!(third.is_ok());
    }

    #[tokio::test]
    async fn pacer_spaces_starts() {
        let limiter = Limiter::new(10, Some(1200)); // one start every 50 ms
        let t0 = Instant::now();
        for _ in 0..4 {
            drop(limiter.acquire().await);
        }
        let elapsed = t0.elapsed();
        // 4 starts: the 2nd, 3rd and 4th each wait one interval
        assert!(elapsed >= Duration::from_millis(150), "{elapsed:?}");
    }

    #[test]
    fn ledger_sums_by_persona_criterion_and_total() {
        let l = UsageLedger::default();
        let u = |i, o| TokenUsage {
            input_tokens: i,
            output_tokens: o,
            cached_input_tokens: 0,
        };
        l.record("Prosecutor", "a", u(10, 1));
        l.record("Prosecutor", "b", u(20, 2));
        l.record("Defense", "a", u(5, 5));
        assert_eq!(l.total(), u(35, 8));
        assert_eq!(l.for_user("Prosecutor"), u(30, 3));
        assert_eq!(l.by_criterion()["a"], u(15, 6));
        let p = Price {
            input_per_mtok: 1.0,
            output_per_mtok: 2.0,
        };
        assert!((p.cost(u(1_000_000, 1_000_000)) - 3.0).abs() < 1e-9);
    }
}
