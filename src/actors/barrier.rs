//! Barriers and restart intensity: the pure bookkeeping behind the coordinator's fan-in
//! points and its supervision of judges.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

/// A fan-in point that knows exactly which arrivals it expects.
///
/// `K` names a branch (a detective, or a judge persona for one criterion). An arrival not
/// expected, or arriving twice, is refused (and reported), so a barrier can never be released
/// by the wrong messages.
#[derive(Debug, Clone)]
pub struct Barrier<K: Ord + Clone, V> {
    expected: BTreeSet<K>,
    arrived: BTreeMap<K, V>,
}

/// Why an arrival was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BarrierError {
    #[error("arrival from a branch this barrier does not expect")]
    Unexpected,
    #[error("second arrival from the same branch")]
    Duplicate,
}

impl<K: Ord + Clone, V> Barrier<K, V> {
    pub fn new(expected: impl IntoIterator<Item = K>) -> Self {
        Barrier {
            expected: expected.into_iter().collect(),
            arrived: BTreeMap::new(),
        }
    }

    pub fn arrive(&mut self, key: K, value: V) -> Result<(), BarrierError> {
        if !self.expected.contains(&key) {
            return Err(BarrierError::Unexpected);
        }
        if self.arrived.contains_key(&key) {
            return Err(BarrierError::Duplicate);
        }
        self.arrived.insert(key, value);
        Ok(())
    }

    pub fn is_complete(&self) -> bool {
        self.arrived.len() == self.expected.len()
    }

    pub fn expected_len(&self) -> usize {
        self.expected.len()
    }

    pub fn arrived_len(&self) -> usize {
        self.arrived.len()
    }

    /// Releases the barrier: the arrivals, and the branches that never arrived.
    pub fn release(self) -> (BTreeMap<K, V>, Vec<K>) {
        let missing = self
            .expected
            .iter()
            .filter(|k| !self.arrived.contains_key(*k))
            .cloned()
            .collect();
        (self.arrived, missing)
    }
}

/// OTP-style restart intensity: at most `max_restarts` restarts within `window`.
#[derive(Debug, Clone)]
pub struct RestartIntensity {
    max_restarts: u32,
    window: Duration,
    recent: VecDeque<Instant>,
}

impl RestartIntensity {
    pub fn new(max_restarts: u32, window: Duration) -> Self {
        RestartIntensity {
            max_restarts,
            window,
            recent: VecDeque::new(),
        }
    }

    /// Asks for one restart at `now`. `false` means the intensity limit is exceeded: give up.
    pub fn allow(&mut self, now: Instant) -> bool {
        while let Some(&t) = self.recent.front() {
            if now.duration_since(t) > self.window {
                self.recent.pop_front();
            } else {
                break;
            }
        }
        if self.recent.len() as u32 >= self.max_restarts {
            return false;
        }
        self.recent.push_back(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barrier_completes_only_with_every_expected_branch() {
        let mut b: Barrier<&str, u8> = Barrier::new(["repo", "doc", "vision"]);
        assert!(!b.is_complete());
        b.arrive("repo", 1).unwrap();
        b.arrive("doc", 2).unwrap();
        assert_eq!(b.arrived_len(), 2);
        assert!(!b.is_complete());
        b.arrive("vision", 3).unwrap();
        assert!(b.is_complete());
        let (arrived, missing) = b.release();
        assert_eq!(arrived.len(), 3);
        assert!(missing.is_empty());
    }

    #[test]
    fn barrier_refuses_unexpected_and_duplicate_arrivals() {
        let mut b: Barrier<&str, u8> = Barrier::new(["a", "b"]);
        assert_eq!(b.arrive("c", 1), Err(BarrierError::Unexpected));
        b.arrive("a", 1).unwrap();
        assert_eq!(b.arrive("a", 2), Err(BarrierError::Duplicate));
        assert!(!b.is_complete());
        let (arrived, missing) = b.release();
        assert_eq!(arrived.get("a"), Some(&1));
        assert_eq!(missing, vec!["b"]);
    }

    #[test]
    fn restart_intensity_limits_restarts_in_window() {
        let mut r = RestartIntensity::new(2, Duration::from_secs(10));
        let t0 = Instant::now();
        assert!(r.allow(t0));
        assert!(r.allow(t0 + Duration::from_secs(1)));
        assert!(!r.allow(t0 + Duration::from_secs(2)));
        // once the window has passed, restarts are allowed again
        assert!(r.allow(t0 + Duration::from_secs(12)));
    }
}
