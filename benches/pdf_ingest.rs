//! DocAnalyst speed: ingest + index of a 50-page report (target ≤ 300 ms in release), one
//! retrieval query (target ≤ 1 ms), the VisionInspector's diagram-only pass
//! (`extract_diagrams`) on the same report and on the 4-page sample with a vector diagram, and
//! each real report of `$AUDITOR_CORPUS` (default `../shared/corpus`) when present (full
//! analysis and diagram-only pass); for those it also prints what was extracted (pages,
//! claimed paths, concepts, images) so a human can check it against the text.
//!
//! Run: `cargo bench --bench pdf_ingest` (`AUDITOR_DUMP_TEXT=1` also prints each page's
//! normalised text, `AUDITOR_DUMP_IMAGES=DIR` writes the diagram PNGs there).

use auditor::pdf::{self, analyse_bytes};
use auditor::testkit::pdf::{build_pdf, long_report, sample_report};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::PathBuf;

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = std::env::var_os("AUDITOR_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus"))
        });
    let Ok(rd) = std::fs::read_dir(&dir) else {
        eprintln!(
            "no corpus at {} (set AUDITOR_CORPUS): skipping real reports",
            dir.display()
        );
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "pdf"))
        .collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().to_string();
            Some((name, std::fs::read(&p).ok()?))
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let bytes = build_pdf(&long_report(50)).expect("50-page fixture");
    let facts = analyse_bytes(&bytes, "bench.pdf", &[]).expect("analysis");
    eprintln!(
        "50-page fixture: {} bytes, {} chunks, {} claimed paths",
        bytes.len(),
        facts.chunks.len(),
        facts.claimed_paths.len()
    );
    c.bench_function("ingest_index_50_pages", |b| {
        b.iter(|| analyse_bytes(black_box(&bytes), "bench.pdf", &[]).expect("analysis"))
    });
    c.bench_function("diagrams_50_pages", |b| {
        b.iter(|| pdf::extract_diagrams(black_box(&bytes), "bench.pdf").expect("diagrams"))
    });
    let sample = build_pdf(&sample_report()).expect("sample fixture");
    c.bench_function("ingest_sample_report", |b| {
        b.iter(|| analyse_bytes(black_box(&sample), "sample.pdf", &[]).expect("analysis"))
    });
    c.bench_function("diagrams_sample_report", |b| {
        b.iter(|| pdf::extract_diagrams(black_box(&sample), "sample.pdf").expect("diagrams"))
    });
    c.bench_function("query_50_pages", |b| {
        b.iter(|| {
            pdf::excerpts(
                black_box(&facts),
                "How does the report explain Dialectical Synthesis with parallel judges?",
                2000,
            )
        })
    });

    for (name, bytes) in corpus() {
        let full_images = match analyse_bytes(&bytes, &name, &[]) {
            Ok(f) => Some(f.images),
            Err(pdf::PdfError::NoText { images, .. }) => Some(images),
            Err(_) => None,
        };
        match pdf::extract_diagrams(&bytes, &name) {
            Ok(only) => eprintln!(
                "\n== {name}: diagram-only pass: {} images, same as the full analysis: {}",
                only.images.len(),
                full_images.as_ref() == Some(&only.images)
            ),
            Err(e) => eprintln!("\n== {name}: diagram-only pass: {e} ({})", e.kind()),
        }
        match analyse_bytes(&bytes, &name, &[]) {
            Ok(f) => {
                eprintln!(
                    "\n== {name}: {} pages, {} chunks, {} images {:?}, notes {:?}",
                    f.pages,
                    f.chunks.len(),
                    f.images.len(),
                    f.images
                        .iter()
                        .map(|i| (i.page, i.kind.as_str(), i.width, i.height))
                        .collect::<Vec<_>>(),
                    f.notes
                );
                if let Some(dir) = std::env::var_os("AUDITOR_DUMP_IMAGES") {
                    for (k, img) in f.images.iter().enumerate() {
                        let out = PathBuf::from(&dir)
                            .join(format!("{name}.p{}.{k}.{}.png", img.page, img.kind));
                        let _ = std::fs::write(out, &img.png);
                    }
                }
                if std::env::var_os("AUDITOR_DUMP_TEXT").is_some() {
                    for (i, t) in f.page_text.iter().enumerate() {
                        eprintln!("--- {name} page {}\n{t}", i + 1);
                    }
                }
                for p in &f.claimed_paths {
                    eprintln!("   path p.{:<3} {:<45} | {}", p.page, p.path, p.context);
                }
                for k in &f.concepts {
                    eprintln!(
                        "   concept {:<24} {:<10} p.{} | {}",
                        k.concept,
                        k.classification.as_str(),
                        k.page,
                        k.quote.chars().take(160).collect::<String>()
                    );
                }
            }
            Err(e) => eprintln!("\n== {name}: {} ({})", e, e.kind()),
        }
        c.bench_function(&format!("corpus/{name}"), |b| {
            b.iter(|| {
                let _ = analyse_bytes(black_box(&bytes), &name, &[]);
            })
        });
        c.bench_function(&format!("corpus_diagrams/{name}"), |b| {
            b.iter(|| {
                let _ = pdf::extract_diagrams(black_box(&bytes), &name);
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
