//! `auditor serve DIR`: the course team's review of one batch in a browser, server-rendered
//! (handlebars, HTML escaping on: every byte from a submission stays text), and the JSON API
//! the same actions go through.
//!
//! **Who may.** It listens on 127.0.0.1 by default. A random token is made at start and the
//! first stdout line is the URL to open, carrying it (`?token=…`). A browser that opens it gets
//! the token in a cookie (HttpOnly, SameSite=Strict) and is sent on to the same page without
//! it; API clients send `Authorization: Bearer TOKEN`. Every request without the token is 401,
//! whatever the address. Forms carry a CSRF token (derived from the access token); a JSON
//! `POST` authenticated by the cookie must carry it too (`X-CSRF-Token`). Nothing is served but
//! the routes below: no file of the disk, none of the batch directory.
//!
//! | route | what |
//! |---|---|
//! | `GET /` | the cohort: heatmap, sort (`?sort=KEY&dir=asc\|desc`), filter (`?filter=…`) |
//! | `GET /submissions/{id}` | a submission: scores, override forms, review mark, comment, history, report |
//! | `GET /submissions/{id}/report` | the auditor's report (HTML, shown in a sandboxed frame) |
//! | `POST /submissions/{id}/override`, `/review`, `/comment` | the forms |
//! | `POST /release` | writes the feedback files (DIR/<id>/feedback.md, .html) |
//! | `POST /regrade` | the regrade form: one submission (`id`) or all, judged again from the stored evidence or audited again (`reaudit=1`) |
//! | `GET /api/regrade`, `POST /api/regrade` | the last regrade's status; `{submission, reaudit, by}` starts one → 202, 409 while one runs |
//! | `GET /api/submissions` | every submission with its automatic, override and final scores |
//! | `POST /api/submissions/{id}/overrides` | `{criterion, score, reason, by}` → 201, or 400 with a message |
//! | `GET /api/submissions/{id}/history` | the history, oldest first |
//! | `GET /export/{canvas,moodle,criteria}.csv` | the exports (`?assignment=NAME`) |

use super::cohort::{Cohort, CriterionView, Filter, Reviewer, Status, SubmissionView};
use super::ledger::{self, EntryError};
use super::{ReviewError, ServeArgs, export};
use crate::exit::CliError;
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{StatusCode, header};
use actix_web::middleware::{DefaultHeaders, Next, from_fn};
use actix_web::{App, HttpMessage, HttpRequest, HttpResponse, HttpServer, web};
use handlebars::Handlebars;
use percent_encoding::{NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::Digest;

const COHORT_TEMPLATE: &str = include_str!("templates/cohort.html.hbs");
const SUBMISSION_TEMPLATE: &str = include_str!("templates/submission.html.hbs");
const STYLE: &str = include_str!("templates/style.css");
const TOKEN_COOKIE: &str = "auditor_token";
const BY_COOKIE: &str = "auditor_by";

pub struct State {
    pub reviewer: Reviewer,
    token: String,
    csrf: String,
    hb: Handlebars<'static>,
    /// Starts the regrades (`None`: this app cannot regrade).
    regrade: Option<super::regrade::Runner>,
}

impl State {
    pub fn new(reviewer: Reviewer, token: String) -> Result<State, handlebars::TemplateError> {
        let csrf = hex::encode(sha2::Sha256::digest(format!("csrf:{token}").as_bytes()));
        let mut hb = Handlebars::new();
        hb.set_strict_mode(true);
        hb.register_template_string("cohort", COHORT_TEMPLATE)?;
        hb.register_template_string("submission", SUBMISSION_TEMPLATE)?;
        Ok(State {
            reviewer,
            token,
            csrf,
            hb,
            regrade: None,
        })
    }

    /// Lets the app start regrades.
    pub fn with_regrade(mut self, runner: super::regrade::Runner) -> State {
        self.regrade = Some(runner);
        self
    }

    fn regrade_status(&self) -> serde_json::Value {
        match &self.regrade {
            Some(r) => json!(r.status()),
            None => json!({"running": false, "started": false}),
        }
    }
}

/// A fresh access token (192 random bits, hex).
pub fn new_token() -> String {
    let bytes: [u8; 24] = rand::random();
    hex::encode(bytes)
}

fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn cookie(req: &HttpRequest, name: &str) -> Option<String> {
    req.headers()
        .get_all(header::COOKIE)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| percent_decode_str(v).decode_utf8_lossy().into_owned())
}

fn query_param(query: &str, name: &str) -> Option<String> {
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// How a request was let in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AuthBy {
    Bearer,
    Cookie,
}

async fn auth(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let Some(state) = req.app_data::<web::Data<State>>().cloned() else {
        return Ok(req.into_response(HttpResponse::InternalServerError().finish()));
    };
    let bearer = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|t| t.trim().to_string());
    let by = if bearer.as_deref().is_some_and(|t| same(t, &state.token)) {
        Some(AuthBy::Bearer)
    } else if cookie(req.request(), TOKEN_COOKIE).is_some_and(|t| same(&t, &state.token)) {
        Some(AuthBy::Cookie)
    } else {
        None
    };
    let from_query = query_param(req.query_string(), "token");
    if let Some(t) = from_query {
        if same(&t, &state.token) && req.method() == actix_web::http::Method::GET {
            // The browser keeps the token in a cookie; the address bar and the history lose it.
            let rest: Vec<(String, String)> =
                url::form_urlencoded::parse(req.query_string().as_bytes())
                    .filter(|(k, _)| k != "token")
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect();
            let mut to = req.path().to_string();
            if !rest.is_empty() {
                to.push('?');
                to.push_str(
                    &url::form_urlencoded::Serializer::new(String::new())
                        .extend_pairs(rest)
                        .finish(),
                );
            }
            let resp = HttpResponse::SeeOther()
                .insert_header((header::LOCATION, to))
                .insert_header((
                    header::SET_COOKIE,
                    format!(
                        "{TOKEN_COOKIE}={}; Path=/; HttpOnly; SameSite=Strict",
                        state.token
                    ),
                ))
                .finish();
            return Ok(req.into_response(resp));
        }
    }
    match by {
        Some(by) => {
            req.extensions_mut().insert(by);
            Ok(next.call(req).await?.map_into_boxed_body())
        }
        None => {
            let resp = HttpResponse::Unauthorized()
                .insert_header((header::WWW_AUTHENTICATE, "Bearer"))
                .content_type("text/plain; charset=utf-8")
                .body("401 Unauthorized: open the URL `auditor serve` printed (it carries the access token), or send Authorization: Bearer TOKEN\n");
            Ok(req.into_response(resp))
        }
    }
}

fn internal(e: impl std::fmt::Display) -> HttpResponse {
    tracing::error!(error = %e, "auditor serve");
    HttpResponse::InternalServerError()
        .content_type("text/plain; charset=utf-8")
        .body(format!("500: {e}\n"))
}

fn review_error(e: ReviewError) -> HttpResponse {
    match e {
        ReviewError::UnknownSubmission(_) => HttpResponse::NotFound()
            .content_type("text/plain; charset=utf-8")
            .body(format!("404: {e}\n")),
        ReviewError::Entry(_) => HttpResponse::BadRequest().json(json!({"error": e.to_string()})),
        other => internal(other),
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ReviewError> + Send + 'static,
) -> Result<T, HttpResponse> {
    match web::block(f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(review_error(e)),
        Err(e) => Err(internal(e)),
    }
}

fn href_id(id: &str) -> String {
    format!("/submissions/{}", utf8_percent_encode(id, NON_ALPHANUMERIC))
}

fn html(body: String, status: StatusCode) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .body(body)
}

// ---------- the cohort page ----------

#[derive(Debug, Deserialize, Default)]
struct CohortQuery {
    sort: Option<String>,
    dir: Option<String>,
    filter: Option<String>,
}

/// A sort key's value for a row: numbers sort as numbers, missing ones last.
#[derive(Debug, Clone, PartialEq, PartialOrd)]
enum Key {
    Num(f64),
    Text(String),
    Missing,
}

fn sort_key(s: &SubmissionView, key: &str) -> Key {
    let num = |x: Option<f64>| x.map(Key::Num).unwrap_or(Key::Missing);
    match key {
        "id" => Key::Text(s.id.to_lowercase()),
        "name" => Key::Text(s.student.name.to_lowercase()),
        "section" => Key::Text(s.student.section.to_lowercase()),
        "status" => Key::Text(s.status.as_str().into()),
        "final" => num(s.final_overall),
        "auditor" => num(s.auto_overall),
        "reviewed" => Key::Num(if s.reviewed() { 1.0 } else { 0.0 }),
        "flags" => Key::Num((s.flags.len() + usize::from(s.changed_under)) as f64),
        c => num(s.criterion(c).and_then(|c| c.final_score).map(f64::from)),
    }
}

fn cmp_keys(a: &Key, b: &Key) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    match (a, b) {
        (Key::Missing, Key::Missing) => Equal,
        (Key::Missing, _) => Greater,
        (_, Key::Missing) => Less,
        (Key::Num(x), Key::Num(y)) => x.total_cmp(y),
        (Key::Text(x), Key::Text(y)) => x.cmp(y),
        (Key::Num(_), Key::Text(_)) => Less,
        (Key::Text(_), Key::Num(_)) => Greater,
    }
}

fn sorted<'a>(mut rows: Vec<&'a SubmissionView>, key: &str, desc: bool) -> Vec<&'a SubmissionView> {
    rows.sort_by(|a, b| {
        let (ka, kb) = (sort_key(a, key), sort_key(b, key));
        let o = match (&ka, &kb) {
            (Key::Missing, _) | (_, Key::Missing) => cmp_keys(&ka, &kb),
            _ if desc => cmp_keys(&kb, &ka),
            _ => cmp_keys(&ka, &kb),
        };
        o.then_with(|| a.id.cmp(&b.id))
    });
    rows
}

fn cohort_href(sort: &str, dir: &str, filter: Filter) -> String {
    url::form_urlencoded::Serializer::new("/?".to_string())
        .append_pair("sort", sort)
        .append_pair("dir", dir)
        .append_pair("filter", filter.as_str())
        .finish()
}

fn score_class(s: Option<u8>) -> String {
    s.map(|v| format!("s{v}")).unwrap_or_else(|| "na".into())
}

fn one_decimal(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "–".into())
}

/// The cohort page's view: the table's columns, filters and rows as the query asks, and the
/// cohort's counts.
fn cohort_view(c: &Cohort, q: &CohortQuery) -> serde_json::Value {
    let order = TableOrder::of(c, q);
    let kept: Vec<&SubmissionView> = c
        .submissions
        .iter()
        .filter(|s| order.filter.keeps(s))
        .collect();
    let rows = sorted(kept, &order.sort, order.desc);
    let lead = vec![
        order.column("id", "submission", "the manifest's id"),
        order.column("name", "student", "the manifest's name column"),
        order.column("section", "section", ""),
        order.column("status", "status", ""),
        order.column(
            "final",
            "final",
            "mean of the final criterion scores (overrides applied)",
        ),
        order.column("auditor", "auditor", "the auditor's overall score"),
    ];
    let crit: Vec<serde_json::Value> = c
        .criteria
        .iter()
        .map(|(id, name)| order.column(id, name, id))
        .collect();
    let trail = vec![
        order.column("reviewed", "reviewed", ""),
        order.column(
            "flags",
            "flags",
            "the auditor's flags, and overrides whose automatic score changed",
        ),
    ];
    let rows: Vec<serde_json::Value> = rows.iter().map(|s| cohort_row(s)).collect();
    let count = |st: Status| c.submissions.iter().filter(|s| s.status == st).count();
    json!({
        "style": STYLE,
        "title": c.title,
        "lead": lead,
        "criteria": crit,
        "trail": trail,
        "filters": order.filters(c),
        "filter": order.filter.label(),
        "rows": rows,
        "shown": rows.len(),
        "total": c.submissions.len(),
        "done": count(Status::Done),
        "failed": count(Status::Failed),
        "running": count(Status::Running),
        "pending": count(Status::Pending),
        "changed": c.submissions.iter().filter(|s| s.changed_under).count(),
        "judges": cohort_judges(c),
    })
}

/// The cohort table's filter and order, as the query asks (an unknown sort key sorts by id,
/// an unknown filter keeps all).
struct TableOrder {
    filter: Filter,
    sort: String,
    desc: bool,
}

impl TableOrder {
    fn of(c: &Cohort, q: &CohortQuery) -> Self {
        let filter = q
            .filter
            .as_deref()
            .and_then(Filter::parse)
            .unwrap_or(Filter::All);
        let valid_keys: Vec<String> = [
            "id", "name", "section", "status", "final", "auditor", "reviewed", "flags",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain(c.criteria.iter().map(|(id, _)| id.clone()))
        .collect();
        let sort = q
            .sort
            .clone()
            .filter(|s| valid_keys.contains(s))
            .unwrap_or_else(|| "id".into());
        let desc = q.dir.as_deref() == Some("desc");
        TableOrder { filter, sort, desc }
    }

    /// A column's header: a click sorts by it (the other way if it is the sort already).
    fn column(&self, key: &str, label: &str, title: &str) -> serde_json::Value {
        let active = key == self.sort;
        let next_dir = if active && !self.desc { "desc" } else { "asc" };
        json!({
            "key": key,
            "label": label,
            "title": title,
            "href": cohort_href(key, next_dir, self.filter),
            "arrow": if active { if self.desc { "▼" } else { "▲" } } else { "" },
        })
    }

    /// The filters, each with its count, the active one marked; each keeps the order.
    fn filters(&self, c: &Cohort) -> Vec<serde_json::Value> {
        Filter::ALL
            .iter()
            .map(|f| {
                json!({
                    "key": f.as_str(),
                    "label": f.label(),
                    "count": c.submissions.iter().filter(|s| f.keeps(s)).count(),
                    "active": *f == self.filter,
                    "href": cohort_href(&self.sort, if self.desc { "desc" } else { "asc" }, *f),
                })
            })
            .collect()
    }
}

/// A submission's row of the cohort table.
fn cohort_row(s: &SubmissionView) -> serde_json::Value {
    let cells: Vec<serde_json::Value> = s.criteria.iter().map(score_cell).collect();
    let mut flags: Vec<String> = s.flags.clone();
    if s.changed_under {
        flags.insert(0, "automatic score changed under an override".into());
    }
    json!({
        "id": s.id,
        "href": href_id(&s.id),
        "name": s.student.name,
        "section": s.student.section,
        "status": s.status.as_str(),
        "failure": s.failure.clone().unwrap_or_default(),
        "final": one_decimal(s.final_overall),
        "auditor": one_decimal(s.auto_overall),
        "cells": cells,
        "reviewed": s.review.reviewed.as_ref().map(|m| m.by.clone()).unwrap_or_default(),
        "needs_review": s.needs_review(),
        "flags": flags.join("; "),
        "flag_count": flags.len(),
    })
}

/// A criterion's cell in a row: the final score, and in its title where it comes from.
fn score_cell(cv: &CriterionView) -> serde_json::Value {
    let title = match (&cv.overridden, cv.auto) {
        (Some(o), a) => format!(
            "{}: {} (override by {}; auditor: {})",
            cv.name,
            o.score,
            o.by,
            a.map(|v| v.to_string())
                .unwrap_or_else(|| "not assessed".into())
        ),
        (None, Some(a)) => format!("{}: {a}", cv.name),
        (None, None) => format!("{}: not assessed", cv.name),
    };
    json!({
        "text": cv.final_score.map(|v| v.to_string()).unwrap_or_else(|| "n/a".into()),
        "class": score_class(cv.final_score),
        "title": title,
        "overridden": cv.overridden.is_some(),
        "flagged": cv.auto_flagged || cv.changed_under,
    })
}

/// The judge configurations the cohort was graded with, each once, in order.
fn cohort_judges(c: &Cohort) -> String {
    let mut judges: Vec<&str> = c
        .submissions
        .iter()
        .map(|s| s.judges.as_str())
        .filter(|j| !j.is_empty())
        .collect();
    judges.sort_unstable();
    judges.dedup();
    judges.join("; ")
}

async fn cohort_page(
    state: web::Data<State>,
    req: HttpRequest,
    q: web::Query<CohortQuery>,
) -> HttpResponse {
    let s = state.clone();
    let cohort = match blocking(move || s.reviewer.cohort()).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let mut v = cohort_view(&cohort, &q);
    v["csrf"] = json!(state.csrf);
    v["regrade"] = state.regrade_status();
    v["can_regrade"] = json!(state.regrade.is_some());
    v["by"] = json!(cookie(&req, BY_COOKIE).unwrap_or_default());
    let started = req.query_string().split('&').any(|p| p == "regrade=1");
    v["notice"] = json!(if started { "Regrade started." } else { "" });
    match state.hb.render("cohort", &v) {
        Ok(body) => html(body, StatusCode::OK),
        Err(e) => internal(e),
    }
}

// ---------- the submission page ----------

fn submission_view(s: &SubmissionView, history: &[ledger::Entry]) -> serde_json::Value {
    let criteria: Vec<serde_json::Value> = s
        .criteria
        .iter()
        .map(|c| {
            json!({
                "id": c.id,
                "name": c.name,
                "auto": c.auto.map(|v| v.to_string()).unwrap_or_else(|| "not assessed".into()),
                "auto_class": score_class(c.auto),
                "final": c.final_score.map(|v| v.to_string()).unwrap_or_else(|| "n/a".into()),
                "final_class": score_class(c.final_score),
                "override": c.overridden.as_ref().map(|o| json!({
                    "score": o.score,
                    "reason": o.reason,
                    "by": o.by,
                    "at": o.at,
                    "auto_then": o.auto_score_then.map(|v| v.to_string()).unwrap_or_else(|| "not assessed".into()),
                })),
                "changed_under": c.changed_under,
                "auto_flagged": c.auto_flagged,
                "options": (1..=5).map(|v| json!({"value": v, "selected": c.final_score == Some(v)})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let history: Vec<serde_json::Value> = history
        .iter()
        .rev()
        .map(|e| {
            json!({
                "id": e.id,
                "at": e.at,
                "by": e.by,
                "kind": e.kind.as_str(),
                "criterion": e.criterion.clone().unwrap_or_default(),
                "score": e.score.map(|v| v.to_string()).unwrap_or_default(),
                "auto": e.auto_score.map(|v| v.to_string()).unwrap_or_default(),
                "text": e.text,
            })
        })
        .collect();
    json!({
        "id": s.id,
        "href": href_id(&s.id),
        "student": s.student,
        "status": s.status.as_str(),
        "failure": s.failure.clone().unwrap_or_default(),
        "commit": s.commit.clone().unwrap_or_default(),
        "final": one_decimal(s.final_overall),
        "auditor": one_decimal(s.auto_overall),
        "judges": s.judges,
        "changed_under": s.changed_under,
        "has_report": s.sidecar.is_some(),
        "verdict": s.sidecar.as_ref().map(|sc| sc.report.verdict.clone()).unwrap_or_default(),
        "criteria": criteria,
        "reviewed": s.review.reviewed,
        "comment": s.review.comment,
        "needs_review": s.needs_review(),
        "flags": s.flags,
        "history": history,
    })
}

async fn render_submission(
    state: &web::Data<State>,
    req: &HttpRequest,
    id: String,
    error: Option<String>,
    status: StatusCode,
) -> HttpResponse {
    let s = state.clone();
    let got = blocking(move || {
        let v = s.reviewer.submission(&id)?;
        let h = s.reviewer.store.history(Some(&id))?;
        Ok((v, h))
    })
    .await;
    let (sub, history) = match got {
        Ok(v) => v,
        Err(r) => return r,
    };
    let mut v = submission_view(&sub, &history);
    v["style"] = json!(STYLE);
    v["csrf"] = json!(state.csrf);
    v["by"] = json!(cookie(req, BY_COOKIE).unwrap_or_default());
    v["error"] = json!(error.unwrap_or_default());
    let saved = req.query_string().split('&').any(|p| p == "saved=1");
    let started = req.query_string().split('&').any(|p| p == "regrade=1");
    v["notice"] = json!(if saved {
        "Saved."
    } else if started {
        "Regrade started."
    } else {
        ""
    });
    v["regrade"] = state.regrade_status();
    v["can_regrade"] = json!(state.regrade.is_some());
    match state.hb.render("submission", &v) {
        Ok(body) => html(body, status),
        Err(e) => internal(e),
    }
}

async fn submission_page(
    state: web::Data<State>,
    req: HttpRequest,
    path: web::Path<String>,
) -> HttpResponse {
    render_submission(&state, &req, path.into_inner(), None, StatusCode::OK).await
}

async fn report_page(state: web::Data<State>, path: web::Path<String>) -> HttpResponse {
    let id = path.into_inner();
    let s = state.clone();
    let sub = match blocking(move || s.reviewer.submission(&id)).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let Some(sc) = &sub.sidecar else {
        return HttpResponse::NotFound()
            .content_type("text/plain; charset=utf-8")
            .body("404: this submission has no report (not graded yet, or failed)\n");
    };
    match crate::report::render_html(&sc.report, &sc.evidence) {
        Ok(body) => html(body, StatusCode::OK),
        Err(e) => internal(e),
    }
}

#[derive(Debug, Deserialize, Default)]
struct OverrideForm {
    csrf: Option<String>,
    criterion: Option<String>,
    score: Option<String>,
    reason: Option<String>,
    by: Option<String>,
}

#[derive(Debug, Deserialize, Default)]
struct ReviewForm {
    csrf: Option<String>,
    reviewed: Option<String>,
    by: Option<String>,
}

#[derive(Debug, Deserialize, Default)]
struct CommentForm {
    csrf: Option<String>,
    text: Option<String>,
    by: Option<String>,
}

fn csrf_ok(state: &State, given: Option<&str>) -> bool {
    given.is_some_and(|g| same(g, &state.csrf))
}

fn forbidden() -> HttpResponse {
    HttpResponse::Forbidden()
        .content_type("text/plain; charset=utf-8")
        .body("403: the form's CSRF token is missing or wrong: reload the page and submit again\n")
}

/// After a form: back to the submission page (POST-redirect-GET), the name remembered.
fn saved(id: &str, by: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, format!("{}?saved=1", href_id(id))))
        .insert_header((
            header::SET_COOKIE,
            format!(
                "{BY_COOKIE}={}; Path=/; SameSite=Strict",
                utf8_percent_encode(by.trim(), NON_ALPHANUMERIC)
            ),
        ))
        .finish()
}

async fn form_result(
    state: &web::Data<State>,
    req: &HttpRequest,
    id: String,
    by: String,
    f: impl FnOnce(&Reviewer) -> Result<ledger::Entry, ReviewError> + Send + 'static,
) -> HttpResponse {
    let s = state.clone();
    match web::block(move || f(&s.reviewer)).await {
        Ok(Ok(_)) => saved(&id, &by),
        Ok(Err(ReviewError::Entry(e))) => {
            render_submission(state, req, id, Some(e.to_string()), StatusCode::BAD_REQUEST).await
        }
        Ok(Err(e)) => review_error(e),
        Err(e) => internal(e),
    }
}

async fn override_form(
    state: web::Data<State>,
    req: HttpRequest,
    path: web::Path<String>,
    form: web::Form<OverrideForm>,
) -> HttpResponse {
    let f = form.into_inner();
    if !csrf_ok(&state, f.csrf.as_deref()) {
        return forbidden();
    }
    let id = path.into_inner();
    let by = f.by.clone().unwrap_or_default();
    let score = match ledger::parse_score(f.score.as_deref().unwrap_or("")) {
        Ok(s) => s,
        Err(e) => {
            return render_submission(
                &state,
                &req,
                id,
                Some(e.to_string()),
                StatusCode::BAD_REQUEST,
            )
            .await;
        }
    };
    let (i, b) = (id.clone(), by.clone());
    form_result(&state, &req, id, by, move |r| {
        r.record_override(
            &i,
            f.criterion.as_deref().unwrap_or(""),
            score,
            f.reason.as_deref().unwrap_or(""),
            &b,
        )
    })
    .await
}

async fn review_form(
    state: web::Data<State>,
    req: HttpRequest,
    path: web::Path<String>,
    form: web::Form<ReviewForm>,
) -> HttpResponse {
    let f = form.into_inner();
    if !csrf_ok(&state, f.csrf.as_deref()) {
        return forbidden();
    }
    let id = path.into_inner();
    let by = f.by.clone().unwrap_or_default();
    let reviewed = f.reviewed.as_deref() != Some("0");
    let (i, b) = (id.clone(), by.clone());
    form_result(&state, &req, id, by, move |r| r.mark(&i, reviewed, &b)).await
}

async fn comment_form(
    state: web::Data<State>,
    req: HttpRequest,
    path: web::Path<String>,
    form: web::Form<CommentForm>,
) -> HttpResponse {
    let f = form.into_inner();
    if !csrf_ok(&state, f.csrf.as_deref()) {
        return forbidden();
    }
    let id = path.into_inner();
    let by = f.by.clone().unwrap_or_default();
    let (i, b) = (id.clone(), by.clone());
    let text = f.text.unwrap_or_default();
    form_result(&state, &req, id, by, move |r| r.comment(&i, &text, &b)).await
}

#[derive(Debug, Deserialize, Default)]
struct CsrfForm {
    csrf: Option<String>,
}

async fn release(state: web::Data<State>, form: web::Form<CsrfForm>) -> HttpResponse {
    if !csrf_ok(&state, form.csrf.as_deref()) {
        return forbidden();
    }
    let s = state.clone();
    match blocking(move || {
        let c = s.reviewer.cohort()?;
        super::write_feedback(&c, &s.reviewer.dir)
    })
    .await
    {
        Ok(n) => HttpResponse::Ok()
            .content_type("text/plain; charset=utf-8")
            .body(format!(
                "Feedback files written for {n} submissions: DIR/<id>/feedback.md and feedback.html in the batch directory.\n"
            )),
        Err(r) => r,
    }
}

#[derive(Debug, Deserialize, Default)]
struct RegradeForm {
    csrf: Option<String>,
    /// One submission; absent or empty: all.
    id: Option<String>,
    /// "1": audit again; otherwise judge again from the stored evidence.
    reaudit: Option<String>,
    by: Option<String>,
}

/// Starts a regrade after checking its submission exists: the status, or the answer to give.
async fn start_regrade(
    state: &web::Data<State>,
    id: Option<String>,
    reaudit: bool,
    by: String,
) -> Result<super::regrade::Status, HttpResponse> {
    let Some(runner) = &state.regrade else {
        return Err(HttpResponse::ServiceUnavailable()
            .content_type("text/plain; charset=utf-8")
            .body("503: this app cannot start a regrade; run `auditor review regrade DIR`\n"));
    };
    if let Some(i) = id.clone() {
        let s = state.clone();
        blocking(move || s.reviewer.submission(&i)).await?;
    }
    runner.start(id.as_deref(), reaudit, &by).map_err(refused)
}

/// A regrade that could not start: 409 with the reason while another runs, else 500.
fn refused(e: super::regrade::StartError) -> HttpResponse {
    match e {
        super::regrade::StartError::Busy(_) => {
            HttpResponse::Conflict().json(json!({"error": e.to_string()}))
        }
        other => internal(other),
    }
}

async fn regrade_form(state: web::Data<State>, form: web::Form<RegradeForm>) -> HttpResponse {
    let f = form.into_inner();
    if !csrf_ok(&state, f.csrf.as_deref()) {
        return forbidden();
    }
    let id = f.id.filter(|i| !i.is_empty());
    let by = f.by.unwrap_or_default();
    let reaudit = f.reaudit.as_deref() == Some("1");
    match start_regrade(&state, id.clone(), reaudit, by.clone()).await {
        Ok(_) => {
            let to = match &id {
                Some(i) => format!("{}?regrade=1", href_id(i)),
                None => "/?regrade=1".into(),
            };
            HttpResponse::SeeOther()
                .insert_header((header::LOCATION, to))
                .insert_header((
                    header::SET_COOKIE,
                    format!(
                        "{BY_COOKIE}={}; Path=/; SameSite=Strict",
                        utf8_percent_encode(by.trim(), NON_ALPHANUMERIC)
                    ),
                ))
                .finish()
        }
        Err(r) => r,
    }
}

async fn api_regrade_status(state: web::Data<State>) -> HttpResponse {
    HttpResponse::Ok().json(state.regrade_status())
}

async fn api_regrade(state: web::Data<State>, req: HttpRequest, body: web::Bytes) -> HttpResponse {
    if req.extensions().get::<AuthBy>() == Some(&AuthBy::Cookie) {
        let given = req
            .headers()
            .get("x-csrf-token")
            .and_then(|v| v.to_str().ok());
        if !csrf_ok(&state, given) {
            return forbidden();
        }
    }
    let v: serde_json::Value = if body.is_empty() {
        json!({})
    } else {
        match serde_json::from_slice(&body) {
            Ok(v @ serde_json::Value::Object(_)) => v,
            Ok(_) => {
                return bad_request(
                    "the body must be a JSON object {\"submission\", \"reaudit\", \"by\"} (no submission: all)".into(),
                );
            }
            Err(e) => return bad_request(format!("the body is not valid JSON: {e}")),
        }
    };
    let id = v
        .get("submission")
        .and_then(|x| x.as_str())
        .filter(|s| !s.is_empty())
        .map(String::from);
    let reaudit = v.get("reaudit").and_then(|x| x.as_bool()).unwrap_or(false);
    let by = v
        .get("by")
        .and_then(|x| x.as_str())
        .unwrap_or("")
        .to_string();
    match start_regrade(&state, id, reaudit, by).await {
        Ok(s) => HttpResponse::Accepted().json(s),
        Err(r) => r,
    }
}

// ---------- the JSON API ----------

#[derive(Debug, Serialize)]
struct ApiSubmission<'a> {
    #[serde(flatten)]
    view: &'a SubmissionView,
    needs_review: bool,
    flagged: bool,
    reviewed: bool,
}

async fn api_submissions(state: web::Data<State>) -> HttpResponse {
    let s = state.clone();
    match blocking(move || s.reviewer.cohort()).await {
        Ok(c) => {
            let list: Vec<ApiSubmission> = c
                .submissions
                .iter()
                .map(|v| ApiSubmission {
                    view: v,
                    needs_review: v.needs_review(),
                    flagged: v.flagged(),
                    reviewed: v.reviewed(),
                })
                .collect();
            HttpResponse::Ok().json(json!({ "criteria": c.criteria, "submissions": list }))
        }
        Err(r) => r,
    }
}

fn bad_request(msg: String) -> HttpResponse {
    HttpResponse::BadRequest().json(json!({ "error": msg }))
}

async fn api_override(
    state: web::Data<State>,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    if req.extensions().get::<AuthBy>() == Some(&AuthBy::Cookie) {
        let given = req
            .headers()
            .get("x-csrf-token")
            .and_then(|v| v.to_str().ok());
        if !csrf_ok(&state, given) {
            return forbidden();
        }
    }
    let v: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        Ok(_) => {
            return bad_request(
                "the body must be a JSON object {\"criterion\", \"score\", \"reason\", \"by\"}"
                    .into(),
            );
        }
        Err(e) => return bad_request(format!("the body is not valid JSON: {e}")),
    };
    let text = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
    let score = match v.get("score") {
        None => return bad_request(EntryError::BadScore("missing".into()).to_string()),
        Some(s) => match ledger::score_of_json(s) {
            Ok(s) => s,
            Err(e) => return bad_request(e.to_string()),
        },
    };
    let (criterion, reason, by) = (text("criterion"), text("reason"), text("by"));
    let id = path.into_inner();
    let s = state.clone();
    match blocking(move || {
        s.reviewer
            .record_override(&id, &criterion, score, &reason, &by)
    })
    .await
    {
        Ok(e) => HttpResponse::Created().json(e),
        Err(r) => r,
    }
}

async fn api_history(state: web::Data<State>, path: web::Path<String>) -> HttpResponse {
    let id = path.into_inner();
    let s = state.clone();
    match blocking(move || s.reviewer.history(&id)).await {
        Ok(h) => HttpResponse::Ok().json(h),
        Err(r) => r,
    }
}

#[derive(Debug, Deserialize, Default)]
struct ExportQuery {
    assignment: Option<String>,
}

async fn export_csv(
    state: web::Data<State>,
    path: web::Path<String>,
    q: web::Query<ExportQuery>,
) -> HttpResponse {
    let name = path.into_inner();
    let format = match name.as_str() {
        "canvas.csv" | "moodle.csv" | "criteria.csv" => name.clone(),
        _ => return not_found().await,
    };
    let assignment = q
        .assignment
        .clone()
        .filter(|a| !a.trim().is_empty())
        .unwrap_or_else(|| "Auditor".into());
    let s = state.clone();
    let got = blocking(move || {
        let c = s.reviewer.cohort()?;
        Ok(match format.as_str() {
            "canvas.csv" => export::canvas(&c, &assignment)?,
            "moodle.csv" => export::moodle(&c, &assignment)?,
            _ => export::criteria(&c)?,
        })
    })
    .await;
    match got {
        Ok(text) => HttpResponse::Ok()
            .content_type("text/csv; charset=utf-8")
            .insert_header((
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ))
            .body(text),
        Err(r) => r,
    }
}

async fn not_found() -> HttpResponse {
    HttpResponse::NotFound()
        .content_type("text/plain; charset=utf-8")
        .body("404: not a page of this review\n")
}

/// The app: routes, the token check, the security headers.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(cohort_page))
        .route("/submissions/{id}", web::get().to(submission_page))
        .route("/submissions/{id}/report", web::get().to(report_page))
        .route("/submissions/{id}/override", web::post().to(override_form))
        .route("/submissions/{id}/review", web::post().to(review_form))
        .route("/submissions/{id}/comment", web::post().to(comment_form))
        .route("/release", web::post().to(release))
        .route("/regrade", web::post().to(regrade_form))
        .route("/api/regrade", web::get().to(api_regrade_status))
        .route("/api/regrade", web::post().to(api_regrade))
        .route("/api/submissions", web::get().to(api_submissions))
        .route(
            "/api/submissions/{id}/overrides",
            web::post().to(api_override),
        )
        .route("/api/submissions/{id}/history", web::get().to(api_history))
        .route("/export/{name}", web::get().to(export_csv));
}

/// Why `auditor serve` cannot start serving, in the flags' terms.
#[derive(Debug, thiserror::Error)]
enum ServeError {
    #[error(
        "--bind {bind:?}: {source}; give an address and port such as 127.0.0.1:8080 (port 0: a free port)"
    )]
    Bind {
        bind: String,
        #[source]
        source: std::net::AddrParseError,
    },
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

/// `auditor serve`: prints the URL (with the token) as its first stdout line, serves until
/// Ctrl-C.
pub fn run_serve(args: ServeArgs) -> Result<i32, CliError> {
    let addr: std::net::SocketAddr = args.bind.parse().map_err(|source| {
        CliError::bad_input(ServeError::Bind {
            bind: args.bind.clone(),
            source,
        })
    })?;
    let reviewer = args.batch.open()?;
    let token = new_token();
    let exe = std::env::current_exe()
        .map_err(|e| CliError::internal_while("finding the auditor binary (for regrades)", e))?;
    let runner = super::regrade::Runner::new(exe, &args.batch.dir, args.batch.store.clone());
    let state = web::Data::new(
        State::new(reviewer, token.clone())
            .map_err(|e| CliError::internal_while("templates", e))?
            .with_regrade(runner),
    );
    let interrupt =
        crate::interrupt::listen(crate::interrupt::OnSecond::Exit).map_err(CliError::internal)?;
    let system = actix_web::rt::System::new();
    system
        .block_on(async move {
            let data = state.clone();
            let server = HttpServer::new(move || {
                App::new()
                    .app_data(data.clone())
                    .app_data(web::FormConfig::default().limit(64 * 1024))
                    .configure(configure)
                    .default_service(web::to(not_found))
                    .wrap(from_fn(auth))
                    .wrap(
                        DefaultHeaders::new()
                            .add((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
                            .add((header::REFERRER_POLICY, "no-referrer"))
                            .add((header::CACHE_CONTROL, "no-store"))
                            .add((
                                header::CONTENT_SECURITY_POLICY,
                                "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-src 'self'; form-action 'self'; frame-ancestors 'self'; base-uri 'none'",
                            )),
                    )
            })
            .workers(2)
            .disable_signals()
            .shutdown_timeout(5)
            .bind(addr)
            .map_err(|source| CliError::bad_input(ServeError::Listen { addr, source }))?;
            let bound = server.addrs();
            let Some(first) = bound.first() else {
                return Err(CliError::internal("the server bound no address"));
            };
            crate::console::say!("http://{first}/?token={token}");
            crate::telemetry::print_for_user(
                tracing::Level::INFO,
                &format!(
                    "auditor serve: reviewing {} ({}) on http://{first}/ — open the URL above (it carries the access token); Ctrl-C stops",
                    state.reviewer.dir.display(),
                    state.reviewer.store.shown()
                ),
            );
            let running = server.run();
            let handle = running.handle();
            actix_web::rt::spawn(async move {
                interrupt.reached(1).await;
                handle.stop(true).await;
            });
            running.await.map_err(CliError::internal)
        })?;
    Ok(crate::exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "ab"));
        assert_ne!(new_token(), new_token());
        assert_eq!(new_token().len(), 48);
    }

    #[test]
    fn the_templates_compile() {
        let mut hb = Handlebars::new();
        hb.register_template_string("c", COHORT_TEMPLATE).unwrap();
        hb.register_template_string("s", SUBMISSION_TEMPLATE)
            .unwrap();
    }
}
