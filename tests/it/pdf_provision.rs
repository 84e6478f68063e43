//! PDFium provisioning: concurrent first use of an empty cache is safe (each provisioner stages
//! its own file, the final rename is atomic).

use auditor::pdf::pdfium::{LIBPDFIUM_SHA256, Provisioning};
use sha2::{Digest, Sha256};

#[test]
fn concurrent_first_use_of_an_empty_cache_is_safe() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("auditor").join("pdfium-test");
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let p = Provisioning {
                override_path: None,
                cache_dir: cache.clone(),
                pythons: vec!["python3".into()],
            };
            std::thread::spawn(move || p.locate())
        })
        .collect();
    for h in handles {
        let path = h.join().unwrap().expect("provisioned");
        assert_eq!(path, cache.join("libpdfium.so"));
    }
    let bytes = std::fs::read(cache.join("libpdfium.so")).unwrap();
    assert_eq!(hex::encode(Sha256::digest(&bytes)), LIBPDFIUM_SHA256);
    // no temporary leftovers next to the library
    let entries: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .filter_map(Result::ok)
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
}
