//! The review as a grader uses it, in a real browser: Debian's Chromium driven through
//! chromedriver (WebDriver) by fantoccini, against `auditor serve` on a graded batch. Open the
//! cohort, filter, open a submission, override a score with a reason, see the export change
//! with the auditor's score kept, mark the submission reviewed.
//!
//! Skipped (with a message) when `/usr/bin/chromium` or `/usr/bin/chromedriver` is missing:
//! `.ci/run` installs both. With `AUDITOR_SCREENSHOTS=DIR` it saves the pages it sees as PNG.

use crate::review_support::*;
use fantoccini::{Client, ClientBuilder, Locator};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn browser(profile: &std::path::Path) -> Option<(Driver, Client)> {
    let (chromium, chromedriver) = ("/usr/bin/chromium", "/usr/bin/chromedriver");
    if !std::path::Path::new(chromium).exists() || !std::path::Path::new(chromedriver).exists() {
        eprintln!(
            "SKIPPED: the browser test needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)"
        );
        return None;
    }
    let port = free_port();
    let driver = Driver(
        Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver"),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "chromedriver never listened");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({
            "binary": chromium,
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1500,1100",
                format!("--user-data-dir={}", profile.display()),
            ]
        }),
    );
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a WebDriver session");
    Some((driver, client))
}

async fn rows(c: &Client) -> Vec<String> {
    let mut ids = Vec::new();
    for r in c.find_all(Locator::Css("#cohort tbody tr")).await.unwrap() {
        ids.push(r.attr("data-id").await.unwrap().unwrap_or_default());
    }
    ids
}

/// Clicks what loads a new page (a link, a form's button) and waits until the old page is gone,
/// so that the next look finds the new page's elements, never a stale one of the old.
async fn load_by(c: &Client, el: fantoccini::elements::Element) {
    let old = c.find(Locator::Css("html")).await.unwrap();
    el.click().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while old.tag_name().await.is_ok() {
        assert!(
            Instant::now() < deadline,
            "the click never loaded a new page"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    c.wait().for_element(Locator::Css("body")).await.unwrap();
}

/// Follows the element found by `loc` (see [`load_by`]).
async fn follow(c: &Client, loc: Locator<'_>) {
    let el = c.find(loc).await.unwrap();
    load_by(c, el).await;
}

async fn shot(c: &Client, name: &str) {
    if let Ok(dir) = std::env::var("AUDITOR_SCREENSHOTS") {
        let png = c.screenshot().await.unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(std::path::Path::new(&dir).join(name), png).unwrap();
    }
}

#[tokio::test]
async fn a_grader_filters_overrides_exports_and_marks_reviewed_in_a_browser() {
    let tmp = tempfile::tempdir().unwrap();
    let out = graded_batch(tmp.path(), 3, None);
    let s = Serve::start(&out, None);
    let Some((_driver, c)) = browser(&tmp.path().join("profile")).await else {
        return;
    };
    let result = async {
        // The printed URL: the token becomes a cookie, the cohort shows every submission.
        c.goto(&s.url).await.unwrap();
        assert_eq!(
            c.current_url().await.unwrap().query(),
            None,
            "the token left the address bar"
        );
        assert_eq!(rows(&c).await, ["s0", "s1", "s2"]);
        shot(&c, "cohort.png").await;

        // Filter: nothing is overridden yet.
        follow(&c, Locator::Id("filter-overridden")).await;
        assert!(rows(&c).await.is_empty());
        follow(&c, Locator::Id("filter-all")).await;

        // Sorted by id; a click on its header sorts descending, another ascending again.
        let by_id = Locator::Css("#cohort thead a[href*='sort=id&']");
        follow(&c, by_id).await;
        assert_eq!(rows(&c).await, ["s2", "s1", "s0"]);
        follow(&c, by_id).await;
        assert_eq!(rows(&c).await, ["s0", "s1", "s2"]);

        // Open s1.
        let before = criteria_export(&s).await;
        let crit = crate::review_cli::scored_below_five(&before.0, &before.1["s1"]);
        let auto = before.1["s1"][&format!("{crit}:auditor")].clone();
        follow(&c, Locator::Css("a[href='/submissions/s1']")).await;
        assert!(
            c.current_url()
                .await
                .unwrap()
                .path()
                .ends_with("/submissions/s1")
        );

        // Override one criterion with a reason.
        let row = c
            .find(Locator::Css(&format!("tr[data-criterion='{crit}']")))
            .await
            .unwrap();
        row.find(Locator::Css("select[name=score]"))
            .await
            .unwrap()
            .select_by_value("5")
            .await
            .unwrap();
        row.find(Locator::Css("input[name=reason]"))
            .await
            .unwrap()
            .send_keys("the diagram shows the fan-out <b>clearly</b>")
            .await
            .unwrap();
        row.find(Locator::Css("input[name=by]"))
            .await
            .unwrap()
            .send_keys("Grace TA")
            .await
            .unwrap();
        load_by(&c, row.find(Locator::Css("button")).await.unwrap()).await;
        assert_eq!(
            c.find(Locator::Id("notice"))
                .await
                .unwrap()
                .text()
                .await
                .unwrap(),
            "Saved."
        );
        let row = c
            .find(Locator::Css(&format!("tr[data-criterion='{crit}']")))
            .await
            .unwrap();
        let text = row.text().await.unwrap();
        assert!(text.contains("5 by Grace TA"), "{text}");
        assert!(
            text.contains("the diagram shows the fan-out <b>clearly</b>"),
            "the reason is text: {text}"
        );

        // The export changed, with the auditor's score kept beside the override.
        let after = criteria_export(&s).await;
        assert_eq!(after.1["s1"][&crit], "5");
        assert_eq!(after.1["s1"][&format!("{crit}:auditor")], auto);
        assert_eq!(after.1["s1"][&format!("{crit}:overridden_by")], "Grace TA");

        // Mark reviewed (the name is remembered from the override's form).
        follow(&c, Locator::Id("mark-reviewed")).await;
        let mark = c
            .find(Locator::Id("review-mark"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(mark.contains("Reviewed by Grace TA"), "{mark}");
        shot(&c, "submission.png").await;

        follow(&c, Locator::Id("back")).await;
        follow(&c, Locator::Id("filter-reviewed")).await;
        assert_eq!(rows(&c).await, ["s1"]);
        follow(&c, Locator::Id("filter-overridden")).await;
        assert_eq!(rows(&c).await, ["s1"]);
        follow(&c, Locator::Id("filter-all")).await;
        shot(&c, "cohort-after.png").await;
    };
    // The session is closed whatever happened, then a failure is reported.
    let outcome = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(result)).await;
    let _ = c.close().await;
    if let Err(p) = outcome {
        std::panic::resume_unwind(p);
    }
}

/// The per-criterion export over HTTP: (header, rows by id).
async fn criteria_export(
    s: &Serve,
) -> (
    Vec<String>,
    std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
) {
    let text = s
        .get("/export/criteria.csv")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
    let mut rows = std::collections::BTreeMap::new();
    for r in rd.records() {
        let m: std::collections::BTreeMap<String, String> = header
            .iter()
            .cloned()
            .zip(r.unwrap().iter().map(String::from))
            .collect();
        rows.insert(m["id"].clone(), m);
    }
    (header, rows)
}
