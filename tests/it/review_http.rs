//! `auditor serve` over HTTP: the token, the API's answers, the pages' escaping, a regrade
//! under overrides, and two staff overriding at once on a shared PostgreSQL store.

use crate::pg_support::Pg;
use crate::review_support::*;
use serde_json::{Value, json};

async fn json_of(r: reqwest::Response) -> (u16, Value) {
    let code = r.status().as_u16();
    (code, r.json().await.unwrap_or(Value::Null))
}

/// A criterion the auditor scored below 5 for `id`, from the API.
async fn criterion_below_five(s: &Serve, id: &str) -> (String, u64) {
    let (code, v) = json_of(s.get("/api/submissions").send().await.unwrap()).await;
    assert_eq!(code, 200);
    let sub = v["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == id)
        .unwrap()
        .clone();
    let c = sub["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["auto"].as_u64().is_some_and(|a| a < 5))
        .expect("a criterion below 5");
    (
        c["id"].as_str().unwrap().to_string(),
        c["auto"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn the_token_guards_every_route_and_the_api_checks_overrides() {
    let tmp = tempfile::tempdir().unwrap();
    let out = graded_batch(tmp.path(), 2, None);
    let s = Serve::start(&out, None);
    let c = s.client();

    // Without the token, or with a wrong one: 401, on every path.
    for path in [
        "/",
        "/api/submissions",
        "/submissions/s0",
        "/export/canvas.csv",
        "/nope",
        "/batch.sqlite",
    ] {
        let r = c.get(format!("{}{path}", s.base)).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 401, "{path}");
        let r = c
            .get(format!("{}{path}", s.base))
            .bearer_auth("wrong")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 401, "{path}");
        let r = c
            .get(format!("{}{path}", s.base))
            .header("Cookie", "auditor_token=wrong")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 401, "{path}");
    }
    let r = c
        .get(format!("{}/?token=wrong", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let r = c
        .post(format!("{}/api/submissions/s0/overrides", s.base))
        .json(&json!({"criterion": "x", "score": 3, "reason": "r", "by": "b"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);

    // The printed URL: the token goes into a cookie and out of the address.
    let r = c.get(&s.url).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 303);
    assert_eq!(r.headers()["location"], "/");
    let set = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    let cookie = set.split(';').next().unwrap().to_string();
    let r = c
        .get(format!("{}/", s.base))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let page = r.text().await.unwrap();
    assert!(
        page.contains("Doe, Student 1"),
        "the cohort page lists the students"
    );
    // Nothing outside the routes, even with the token.
    for path in ["/batch.sqlite", "/s0/report.html", "/../cohort.csv"] {
        assert_eq!(
            s.get(path).send().await.unwrap().status().as_u16(),
            404,
            "{path}"
        );
    }

    let (crit, auto) = criterion_below_five(&s, "s1").await;
    let post = |body: Value| s.post_json("/api/submissions/s1/overrides", body).send();
    for (body, says) in [
        (
            json!({"criterion": crit, "score": 6, "reason": "r", "by": "ta"}),
            "score \"6\" is not valid",
        ),
        (
            json!({"criterion": crit, "score": "x", "reason": "r", "by": "ta"}),
            "score \"x\" is not valid",
        ),
        (
            json!({"criterion": crit, "reason": "r", "by": "ta"}),
            "score \"missing\" is not valid",
        ),
        (
            json!({"criterion": "no_such", "score": 3, "reason": "r", "by": "ta"}),
            "unknown criterion \"no_such\"",
        ),
        (
            json!({"criterion": crit, "score": 3, "reason": " ", "by": "ta"}),
            "a reason is required",
        ),
        (
            json!({"criterion": crit, "score": 3, "reason": "r"}),
            "say who you are",
        ),
    ] {
        let (code, v) = json_of(post(body.clone()).await.unwrap()).await;
        assert_eq!(code, 400, "{body}");
        assert!(
            v["error"].as_str().unwrap_or("").contains(says),
            "{body}: {v}"
        );
    }
    let r = s
        .client()
        .post(format!("{}/api/submissions/s1/overrides", s.base))
        .bearer_auth(&s.token)
        .header("Content-Type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let (code, _) = json_of(
        s.post_json(
            "/api/submissions/nobody/overrides",
            json!({"criterion": crit, "score": 3, "reason": "r", "by": "ta"}),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(code, 404);
    let (code, h) = json_of(s.get("/api/submissions/s1/history").send().await.unwrap()).await;
    assert_eq!(
        (code, h.as_array().unwrap().len()),
        (200, 0),
        "nothing refused was kept"
    );

    // A good one: 201, then in the list, the history and the export.
    let (code, e) = json_of(
        post(json!({"criterion": crit, "score": 5, "reason": SCRIPT, "by": "ta <b>1</b>"}))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(code, 201, "{e}");
    assert_eq!(
        (e["score"].as_u64(), e["auto_score"].as_u64()),
        (Some(5), Some(auto))
    );
    let (_, v) = json_of(s.get("/api/submissions").send().await.unwrap()).await;
    let s1 = v["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == "s1")
        .unwrap();
    let c1 = s1["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == crit.as_str())
        .unwrap();
    assert_eq!(
        (c1["auto"].as_u64(), c1["final_score"].as_u64()),
        (Some(auto), Some(5))
    );
    assert_eq!(c1["overridden"]["by"], "ta <b>1</b>");
    assert_eq!(s1["overridden"], true);
    let csv = s
        .get("/export/criteria.csv")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .contains(&format!("{crit}:auditor")),
        "{csv}"
    );

    // Script from a submission (a commit message, the manifest's name) or from a reason is text.
    for path in [
        "/",
        "/submissions/s1",
        "/submissions/s0",
        "/submissions/s0/report",
    ] {
        let body = s.get(path).send().await.unwrap().text().await.unwrap();
        assert!(!body.contains("<script"), "{path} holds a script element");
        assert!(
            !body.contains("<b>1</b>"),
            "{path} holds markup from a name"
        );
    }
    let page = s
        .get("/submissions/s1")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;"),
        "the reason shows as text"
    );
    // The report is framed without scripts, with its own origin kept: a frame with an opaque
    // origin fails the report's `frame-ancestors 'self'` and stays blank in a browser.
    assert!(
        page.contains(r#"<iframe src="/submissions/s1/report" sandbox="allow-same-origin""#)
            && !page.contains("allow-scripts"),
        "{page}"
    );
    let cohort = s.get("/").send().await.unwrap().text().await.unwrap();
    assert!(
        cohort.contains("Student &lt;script&gt;"),
        "the name shows as text"
    );

    // A form without its CSRF token is refused, even with the cookie.
    let r = c
        .post(format!("{}/submissions/s1/review", s.base))
        .header("Cookie", &cookie)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("reviewed=1&by=ta")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let r = c
        .post(format!("{}/api/submissions/s1/overrides", s.base))
        .header("Cookie", &cookie)
        .json(&json!({"criterion": crit, "score": 1, "reason": "r", "by": "b"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.status().as_u16(),
        403,
        "a cookie-authenticated JSON POST needs the CSRF header"
    );
}

#[tokio::test]
async fn a_regrade_keeps_the_overrides() {
    let tmp = tempfile::tempdir().unwrap();
    let out = graded_batch(tmp.path(), 1, None);
    let dir = out.to_str().unwrap();
    let s = Serve::start(&out, None);
    let (crit, auto) = criterion_below_five(&s, "s0").await;
    let (code, _) = json_of(
        s.post_json(
            "/api/submissions/s0/overrides",
            json!({"criterion": crit, "score": 5, "reason": "seen in class", "by": "ta"}),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(code, 201);
    let job_before = {
        let (_, v) = json_of(s.get("/api/submissions").send().await.unwrap()).await;
        v["submissions"][0]["job_id"].clone()
    };
    batch(
        tmp.path(),
        &tmp.path().join("cohort.csv"),
        &out,
        None,
        &["--regrade-all"],
    );
    let (_, v) = json_of(s.get("/api/submissions").send().await.unwrap()).await;
    let sub = &v["submissions"][0];
    assert_eq!(sub["status"], "done");
    let c = sub["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == crit.as_str())
        .unwrap();
    assert_eq!(
        c["final_score"].as_u64(),
        Some(5),
        "the override survives: {c}"
    );
    assert_eq!(
        c["auto"].as_u64(),
        Some(auto),
        "same evidence, same automatic score"
    );
    assert_eq!(c["changed_under"], false);
    assert_eq!(
        sub["job_id"], job_before,
        "a regrade of the same commit reuses its job"
    );
    let (_, history, _) = auditor(&["review", "history", dir, "s0"]);
    assert_eq!(history.lines().count(), 1, "{history}");
}

#[tokio::test]
async fn two_staff_overriding_at_once_on_postgres_are_both_kept() {
    let Some(pg) = Pg::start() else { return };
    let url = pg.create_db("review");
    let tmp = tempfile::tempdir().unwrap();
    let out = graded_batch(tmp.path(), 2, Some(&url));
    // Two reviewers, each with their own server on the shared store.
    let a = Serve::start(&out, Some(&url));
    let b = Serve::start(&out, Some(&url));
    let (crit, _) = criterion_below_five(&a, "s1").await;
    let send = |s: &Serve, who: &str, i: usize| {
        s.post_json(
            "/api/submissions/s1/overrides",
            json!({"criterion": crit, "score": 1 + (i % 5), "reason": format!("{who} #{i}"), "by": who}),
        )
        .send()
    };
    let mut pending = Vec::new();
    for i in 0..10 {
        pending.push(send(&a, "alice", i));
        pending.push(send(&b, "bob", i));
    }
    for r in futures::future::join_all(pending).await {
        assert_eq!(r.unwrap().status().as_u16(), 201);
    }
    let (_, h) = json_of(b.get("/api/submissions/s1/history").send().await.unwrap()).await;
    let h = h.as_array().unwrap();
    assert_eq!(h.len(), 20, "every override is in the history");
    for who in ["alice", "bob"] {
        assert_eq!(h.iter().filter(|e| e["by"] == who).count(), 10, "{who}");
    }
    let ids: Vec<i64> = h.iter().map(|e| e["id"].as_i64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "oldest first: {ids:?}");
    // The standing override is the last one appended, for both servers.
    let last = h.last().unwrap();
    for s in [&a, &b] {
        let (_, v) = json_of(s.get("/api/submissions").send().await.unwrap()).await;
        let s1 = v["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["id"] == "s1")
            .unwrap();
        let c = s1["criteria"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["id"] == crit.as_str())
            .unwrap();
        assert_eq!(c["overridden"]["reason"], last["text"]);
    }
    // The store refuses to rewrite the history.
    assert_eq!(
        pg.try_count("review", "WITH u AS (UPDATE auditor_review_history SET score = 5 RETURNING 1) SELECT count(*) FROM u"),
        None
    );
    assert_eq!(
        pg.try_count(
            "review",
            "WITH d AS (DELETE FROM auditor_review_history RETURNING 1) SELECT count(*) FROM d"
        ),
        None
    );
    assert_eq!(
        pg.count("review", "SELECT count(*) FROM auditor_review_history"),
        20
    );
    // The command line reads the same store.
    let (code, text, err) = auditor(&[
        "review",
        "history",
        out.to_str().unwrap(),
        "s1",
        "--store",
        &url,
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(text.lines().count(), 20);
}

/// The app's regrade: an override on every scored criterion of s0 and one on s1; s0's student
/// then pushes a whole new project; "audit again, all" from the API. Every override stays; an
/// override is flagged exactly when the automatic score under it changed, on the API, the
/// cohort page and the submission page; the history gets no entry from a regrade.
#[tokio::test]
async fn a_regrade_from_the_app_keeps_every_override_and_flags_the_changed_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let out = graded_batch(tmp.path(), 2, None);
    let s = Serve::start(&out, None);
    let subs = |v: &Value, id: &str| {
        v["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["id"] == id)
            .unwrap()
            .clone()
    };
    let (_, before) = json_of(s.get("/api/submissions").send().await.unwrap()).await;
    assert!(
        subs(&before, "s0")["judges"]
            .as_str()
            .unwrap()
            .starts_with("offline judges"),
        "the judges are labelled: {}",
        subs(&before, "s0")["judges"]
    );
    let mut mine: Vec<(String, &str, u64)> = Vec::new();
    for c in subs(&before, "s0")["criteria"].as_array().unwrap() {
        let Some(auto) = c["auto"].as_u64() else {
            continue;
        };
        let score = if auto == 5 { 4 } else { 5 };
        mine.push((c["id"].as_str().unwrap().to_string(), "s0", auto));
        let (code, _) = json_of(
            s.post_json(
                "/api/submissions/s0/overrides",
                json!({"criterion": c["id"], "score": score, "reason": "seen in class", "by": "ta"}),
            )
            .send()
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(code, 201);
    }
    let (crit1, auto1) = criterion_below_five(&s, "s1").await;
    let (code, _) = json_of(
        s.post_json(
            "/api/submissions/s1/overrides",
            json!({"criterion": crit1, "score": 5, "reason": "oral exam", "by": "ta"}),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(code, 201);
    mine.push((crit1.clone(), "s1", auto1));
    assert!(mine.len() >= 3, "{mine:?}");

    // The student pushes a whole project (a new commit at the manifest's ref).
    let repo = tmp.path().join("repos/s0");
    std::fs::remove_dir_all(&repo).unwrap();
    auditor::testkit::git::build_repo(&repo, &auditor::testkit::git::sample_langgraph_project())
        .unwrap();

    // A form without the CSRF token starts nothing.
    let r = s
        .client()
        .post(format!("{}/regrade", s.base))
        .bearer_auth(&s.token)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("reaudit=1")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let (_, st) = json_of(s.get("/api/regrade").send().await.unwrap()).await;
    assert_eq!(st["started"], false);

    let (code, st) = json_of(
        s.post_json("/api/regrade", json!({"reaudit": true, "by": "lead"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(code, 202, "{st}");
    assert_eq!(st["what"], "all submissions");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(240);
    let st = loop {
        let (_, st) = json_of(s.get("/api/regrade").send().await.unwrap()).await;
        if st["running"] == false {
            break st;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the regrade never ended: {st}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert!(
        matches!(st["exit_code"].as_i64(), Some(0) | Some(3)),
        "the regrade: {st}"
    );

    let (_, after) = json_of(s.get("/api/submissions").send().await.unwrap()).await;
    assert_ne!(
        subs(&after, "s0")["commit"],
        subs(&before, "s0")["commit"],
        "audited again at the new commit"
    );
    let (mut changed, mut same) = (Vec::new(), Vec::new());
    for (crit, id, auto_then) in &mine {
        let sub = subs(&after, id);
        let c = sub["criteria"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == crit.as_str())
            .unwrap()
            .clone();
        assert!(!c["overridden"].is_null(), "the override stays: {c}");
        assert_eq!(c["final_score"], c["overridden"]["score"], "{c}");
        assert_eq!(
            c["overridden"]["auto_score_then"].as_u64(),
            Some(*auto_then)
        );
        let moved = c["auto"].as_u64() != Some(*auto_then);
        assert_eq!(
            c["changed_under"], moved,
            "flagged exactly when it moved: {c}"
        );
        if moved {
            changed.push(format!("{id}:{crit}"));
        } else {
            same.push(format!("{id}:{crit}"));
        }
    }
    assert!(
        !changed.is_empty(),
        "the new project moved a score: {same:?}"
    );
    assert!(same.contains(&format!("s1:{crit1}")), "s1 did not change");
    assert_eq!(subs(&after, "s0")["changed_under"], true);
    assert_eq!(subs(&after, "s0")["needs_review"], true);
    assert_eq!(subs(&after, "s1")["changed_under"], false);

    let cohort = s.get("/").send().await.unwrap().text().await.unwrap();
    assert!(
        cohort.contains("id=\"changed-under\""),
        "the cohort says so"
    );
    assert!(cohort.contains("id=\"regrade-status\""));
    let page = s
        .get("/submissions/s0")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("id=\"changed-under\""));
    assert!(page.contains("score changed since this override"));
    let (_, h) = json_of(s.get("/api/submissions/s0/history").send().await.unwrap()).await;
    assert_eq!(
        h.as_array().unwrap().len(),
        mine.len() - 1,
        "a regrade writes no history"
    );
}
