//! The judge response cache, as a [`JudgeService`] wrapper around the run's one shared judge
//! service (and so its one LLM limiter).
//!
//! For each request: compute the [`request_key`] (sha256 of the full request: persona,
//! criterion, judge mode and model, judge configuration, regrade generation, the whole rubric and
//! the serialised evidence pack); look it up in the store → a hit is returned as it was first
//! answered (same opinion, same token figures, so a resumed report equals a clean one). A miss
//! is counted in the store *before* it is sent, sent to the inner service, and its answer
//! persisted as soon as it arrives. Identical requests in flight at the same time (two
//! submissions of the same commit) share one call.
//!
//! Failures are never cached: a request that failed is asked again on the next run. A request
//! whose answer could not be stored (the store unreachable) is not sent at all.

use super::progress::Stats;
use super::store::BatchStore;
use super::store::{CachedResponse, OpinionRecord};
use crate::judges::{JudgeAnswer, JudgeFault, JudgeFuture, JudgeRequest, JudgeService};
use crate::model::{Judge, JudgeMode, JudicialOpinion, TokenUsage};
use futures::FutureExt;
use futures::future::{LocalBoxFuture, Shared};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Version of the key material layout; bump when it changes.
const KEY_VERSION: u32 = 1;

#[derive(Serialize)]
struct KeyMaterial<'a> {
    v: u32,
    persona: &'a str,
    criterion: &'a str,
    mode: &'a JudgeMode,
    model: Option<&'a str>,
    judge_config: &'a str,
    generation: u32,
    rubric: &'a crate::rubric::Rubric,
    pack: &'a crate::judges::EvidencePack,
}

struct HashWriter(Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The cache key of a request: hex sha256 of its canonical JSON (struct fields in declaration
/// order, maps sorted: the model types use `BTreeMap`).
pub fn request_key(
    req: &JudgeRequest,
    mode: &JudgeMode,
    model: Option<&str>,
    judge_config: &str,
    generation: u32,
) -> String {
    let material = KeyMaterial {
        v: KEY_VERSION,
        persona: req.persona.as_str(),
        criterion: &req.criterion_id,
        mode,
        model,
        judge_config,
        generation,
        rubric: &req.rubric,
        pack: &req.pack,
    };
    let mut w = HashWriter(Sha256::new());
    // Serialising plain data into a hasher cannot fail (no I/O error, no non-string map key).
    if serde_json::to_writer(&mut w, &material).is_err() {
        w.0.update(b"unserialisable request");
    }
    hex::encode(w.0.finalize())
}

type SharedAnswer = Shared<LocalBoxFuture<'static, Result<JudgeAnswer, JudgeFault>>>;

/// What every submission's cache wrapper shares: the store, the inner service, the counters
/// and the requests in flight.
pub struct CacheShared {
    pub store: Rc<dyn BatchStore>,
    pub inner: Rc<dyn JudgeService>,
    pub stats: Rc<Stats>,
    pub judge_config: String,
    in_flight: RefCell<HashMap<String, SharedAnswer>>,
}

impl CacheShared {
    pub fn new(
        store: Rc<dyn BatchStore>,
        inner: Rc<dyn JudgeService>,
        stats: Rc<Stats>,
        judge_config: String,
    ) -> Rc<Self> {
        Rc::new(CacheShared {
            store,
            inner,
            stats,
            judge_config,
            in_flight: RefCell::new(HashMap::new()),
        })
    }
}

/// The cache wrapper of one job (one submission): records the job's opinions as they arrive.
#[derive(Clone)]
pub struct CachedJudges {
    pub shared: Rc<CacheShared>,
    pub job_id: i64,
    pub generation: u32,
}

/// A cached opinion that cannot be read back (the entry is ignored: the judges are asked again).
#[derive(Debug, thiserror::Error)]
#[error("cached opinion unreadable: {0}")]
struct CacheEntryError(#[source] serde_json::Error);

fn answer_from_cache(hit: &CachedResponse) -> Result<JudgeAnswer, CacheEntryError> {
    let opinion: JudicialOpinion =
        serde_json::from_str(&hit.opinion_json).map_err(CacheEntryError)?;
    Ok(JudgeAnswer {
        opinion,
        usage: TokenUsage {
            input_tokens: hit.input_tokens,
            output_tokens: hit.output_tokens,
            // the store keeps no cache split: a stored answer costs nothing again anyway
            cached_input_tokens: 0,
        },
        attempts: hit.attempts,
    })
}

impl CachedJudges {
    fn record(&self, key: &str, answer: &JudgeAnswer, from_cache: bool) {
        let json = serde_json::to_string(&answer.opinion).unwrap_or_default();
        if let Err(e) = self.shared.store.record_opinion(&OpinionRecord {
            job_id: self.job_id,
            generation: self.generation,
            persona: answer.opinion.judge.as_str(),
            criterion_id: &answer.opinion.criterion_id,
            request_key: key,
            opinion_json: &json,
            from_cache,
        }) {
            tracing::error!(error = %e, "could not persist an opinion");
        }
    }
}

impl JudgeService for CachedJudges {
    fn judge(&self, req: JudgeRequest) -> JudgeFuture {
        let shared = self.shared.clone();
        let mode = shared.inner.mode();
        let model = shared.inner.model(req.persona);
        let key = request_key(
            &req,
            &mode,
            model.as_deref(),
            &shared.judge_config,
            self.generation,
        );
        match shared.store.cached_response(&key) {
            Ok(Some(hit)) => match answer_from_cache(&hit) {
                Ok(answer) => {
                    shared.stats.cache_hit();
                    self.record(&key, &answer, true);
                    return Box::pin(futures::future::ready(Ok(answer)));
                }
                Err(e) => tracing::warn!(error = %e, "ignoring an unreadable cache entry"),
            },
            Ok(None) => {}
            Err(e) => return unstorable(e),
        }
        let existing = shared.in_flight.borrow().get(&key).cloned();
        let fut = match existing {
            Some(f) => f,
            None => {
                if let Err(e) = shared.store.note_request(&key) {
                    return unstorable(e);
                }
                let persona = req.persona;
                let criterion = req.criterion_id.clone();
                let inner_fut = shared.inner.judge(req);
                let s2 = shared.clone();
                let k2 = key.clone();
                let model2 = model.clone();
                shared.stats.request_started();
                let call: LocalBoxFuture<'static, Result<JudgeAnswer, JudgeFault>> =
                    Box::pin(async move {
                        let result = inner_fut.await;
                        s2.stats
                            .request_finished(result.as_ref().ok().map(|a| a.usage));
                        if let Ok(answer) = &result {
                            persist(
                                s2.store.as_ref(),
                                &k2,
                                persona,
                                &criterion,
                                model2.as_deref(),
                                answer,
                            );
                        }
                        s2.in_flight.borrow_mut().remove(&k2);
                        result
                    });
                let f = call.shared();
                shared.in_flight.borrow_mut().insert(key.clone(), f.clone());
                f
            }
        };
        let this = self.clone();
        Box::pin(async move {
            let result = fut.await;
            if let Ok(answer) = &result {
                this.record(&key, answer, false);
            }
            result
        })
    }

    fn model(&self, persona: Judge) -> Option<String> {
        self.shared.inner.model(persona)
    }

    fn mode(&self) -> JudgeMode {
        self.shared.inner.mode()
    }

    fn prompts(&self) -> Option<String> {
        self.shared.inner.prompts()
    }
}

/// The store cannot be read or written (a database away past its retry time): the request is
/// not sent, since an answer that cannot be stored would be paid for again by the next run.
fn unstorable(e: super::store::StoreError) -> JudgeFuture {
    let why = format!("not asked: the batch store cannot keep the answer ({e})");
    tracing::error!("{why}");
    Box::pin(futures::future::ready(Err(JudgeFault::Invalid(why.into()))))
}

fn persist(
    store: &dyn BatchStore,
    key: &str,
    persona: Judge,
    criterion: &str,
    model: Option<&str>,
    answer: &JudgeAnswer,
) {
    let opinion_json = match serde_json::to_string(&answer.opinion) {
        Ok(j) => j,
        Err(e) => {
            tracing::error!(error = %e, "could not serialise an opinion for the cache");
            return;
        }
    };
    let resp = CachedResponse {
        opinion_json,
        input_tokens: answer.usage.input_tokens,
        output_tokens: answer.usage.output_tokens,
        attempts: answer.attempts,
    };
    if let Err(e) = store.put_response(key, persona.as_str(), criterion, model, &resp) {
        tracing::error!(error = %e, "could not persist a judge answer");
    }
}

/// A judge service for tests and benchmarks: answers like `inner` after a fixed delay, with at
/// most `max_in_flight` requests at once (a stand-in for an LLM behind its limiter). Not in
/// release binaries.
#[cfg(debug_assertions)]
pub struct SimulatedLatency {
    pub inner: Rc<dyn JudgeService>,
    pub delay: std::time::Duration,
    pub limiter: Rc<tokio::sync::Semaphore>,
}

#[cfg(debug_assertions)]
impl JudgeService for SimulatedLatency {
    fn judge(&self, req: JudgeRequest) -> JudgeFuture {
        let fut = self.inner.judge(req);
        let delay = self.delay;
        let limiter = self.limiter.clone();
        Box::pin(async move {
            let _permit = limiter.acquire().await;
            tokio::time::sleep(delay).await;
            fut.await
        })
    }
    fn model(&self, persona: Judge) -> Option<String> {
        self.inner.model(persona)
    }
    fn mode(&self) -> JudgeMode {
        self.inner.mode()
    }
    fn prompts(&self) -> Option<String> {
        self.inner.prompts()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::store::sqlite::Store;
    use crate::judges::{EvidencePack, OfflineJudges};
    use crate::model::{Confidence, Detective, Evidence};
    use std::cell::Cell;
    use std::sync::Arc;

    fn rubric() -> Arc<crate::rubric::Rubric> {
        Arc::new(
            crate::rubric::Rubric::load(None)
                .expect("embedded rubric")
                .rubric,
        )
    }

    fn req(persona: Judge, criterion: &str, found: bool) -> JudgeRequest {
        let mut pack = EvidencePack::default();
        pack.evidences.insert(
            criterion.into(),
            vec![Evidence::fact(
                "e.1",
                Detective::RepoInvestigator,
                "g",
                found,
                "a.py:1",
                "r",
                Confidence::CERTAIN,
            )],
        );
        JudgeRequest {
            persona,
            criterion_id: criterion.into(),
            rubric: rubric(),
            pack: Arc::new(pack),
        }
    }

    #[test]
    fn key_changes_with_every_part_of_the_request() {
        let r = rubric();
        let c = r.dimensions[0].id.clone();
        let base = request_key(
            &req(Judge::Defense, &c, true),
            &JudgeMode::Llm,
            Some("m"),
            "cfg",
            0,
        );
        assert_eq!(
            base,
            request_key(
                &req(Judge::Defense, &c, true),
                &JudgeMode::Llm,
                Some("m"),
                "cfg",
                0
            )
        );
        let variants = [
            request_key(
                &req(Judge::Prosecutor, &c, true),
                &JudgeMode::Llm,
                Some("m"),
                "cfg",
                0,
            ),
            request_key(
                &req(Judge::Defense, &c, false),
                &JudgeMode::Llm,
                Some("m"),
                "cfg",
                0,
            ),
            request_key(
                &req(Judge::Defense, &c, true),
                &JudgeMode::Offline,
                Some("m"),
                "cfg",
                0,
            ),
            request_key(
                &req(Judge::Defense, &c, true),
                &JudgeMode::Llm,
                Some("m2"),
                "cfg",
                0,
            ),
            request_key(
                &req(Judge::Defense, &c, true),
                &JudgeMode::Llm,
                Some("m"),
                "cfg2",
                0,
            ),
            request_key(
                &req(Judge::Defense, &c, true),
                &JudgeMode::Llm,
                Some("m"),
                "cfg",
                1,
            ),
        ];
        for v in variants {
            assert_ne!(base, v);
        }
        let mut changed = (*r).clone();
        changed.dimensions[0].forensic_instruction.push('!');
        let mut rq = req(Judge::Defense, &c, true);
        rq.rubric = Arc::new(changed);
        assert_ne!(base, request_key(&rq, &JudgeMode::Llm, Some("m"), "cfg", 0));
    }

    struct Counting {
        calls: Rc<Cell<u32>>,
    }
    impl JudgeService for Counting {
        fn judge(&self, req: JudgeRequest) -> JudgeFuture {
            self.calls.set(self.calls.get() + 1);
            let f = OfflineJudges.judge(req);
            Box::pin(async move {
                tokio::task::yield_now().await;
                f.await
            })
        }
        fn model(&self, _: Judge) -> Option<String> {
            None
        }
        fn mode(&self) -> JudgeMode {
            JudgeMode::Offline
        }
    }

    #[test]
    fn hits_are_served_from_the_store_and_concurrent_twins_share_one_call() {
        let dir = tempfile::tempdir().unwrap();
        let store = Rc::new(Store::open_in(dir.path()).unwrap());
        let calls = Rc::new(Cell::new(0));
        let shared = CacheShared::new(
            store.clone(),
            Rc::new(Counting {
                calls: calls.clone(),
            }),
            Rc::new(Stats::default()),
            "cfg".into(),
        );
        let svc = CachedJudges {
            shared,
            job_id: 0,
            generation: 0,
        };
        let c = rubric().dimensions[0].id.clone();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt, async {
            let (a, b) = futures::join!(
                svc.judge(req(Judge::TechLead, &c, true)),
                svc.judge(req(Judge::TechLead, &c, true))
            );
            assert_eq!(a.unwrap(), b.unwrap());
            assert_eq!(calls.get(), 1, "twins in flight share one call");
            let again = svc.judge(req(Judge::TechLead, &c, true)).await.unwrap();
            assert_eq!(again.opinion.judge, Judge::TechLead);
            assert_eq!(calls.get(), 1, "a cached answer is not asked again");
            svc.judge(req(Judge::Defense, &c, true)).await.unwrap();
            assert_eq!(calls.get(), 2);
        });
        let counters = store.counters().unwrap();
        assert_eq!(counters.asked, 2);
        assert_eq!(counters.cache_hits, 1);
        assert_eq!(counters.responses, 2);
    }
}
