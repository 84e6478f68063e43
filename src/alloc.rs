//! Memory allocator choices, in one place.
//!
//! - mimalloc is the global allocator (tool, tests, benchmarks); tree-sitter's C allocations
//!   are routed to it too ([`tree_sitter_to_mimalloc`]). Analysing 1,000 Python files took 1.65 s
//!   with glibc and 0.98 s after this change and the walker's (benches/repo_investigate.rs).
//! - [`tune_process`] (first thing in `main`): no transparent huge pages, and glibc limited to
//!   two arenas for the C libraries that still use it (libgit2, SQLite, PDFium).
//! - [`prefer_low_memory`] (`auditor batch`): freed memory returned to the OS at once.
//!
//! Figures (scripts/bench-batch*.sh, 2026-11-22): mimalloc's defaults held 934 MB in the HTTP
//! batch bench (200 submissions, --concurrency 32, ~70 threads, debug binary) where glibc held
//! 123 MB, for two reasons:
//!  1. it asks for transparent huge pages on its arenas (`madvise(MADV_HUGEPAGE)`), so every
//!     2 MiB region touched by one of the threads' heaps became a whole resident huge page;
//!  2. it returns freed pages to the OS only after 1 s (`purge_delay`), long enough to keep the
//!     garbage of the detectives' burst of all running submissions.
//!
//! Without both: 221 MB there, 40.7 MB instead of 94.3 MB in `scripts/bench-batch.sh`, 46 MB
//! instead of 80–95 MB for one audit of `auditor sample`. Huge pages cost no measurable speed;
//! an immediate purge costs ~10% on the 1,000-file analysis (memory returned and faulted in
//! again), so only batch runs, which hold many submissions at once, ask for it.
//! `MIMALLOC_ALLOW_THP`, `MIMALLOC_PURGE_DELAY` and `MALLOC_ARENA_MAX` in the environment win.

/// Routes tree-sitter's C allocations (a parse makes one per subtree, then frees them all) to
/// mimalloc too: parsing 1,000 files took 15% less time than with glibc's malloc
/// (`parse_only_1000_python_files`). Runs once; `repo::python::syntax` calls it before it
/// creates the first tree-sitter object (every parser comes from its `new_parser`).
pub fn tree_sitter_to_mimalloc() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        // SAFETY: the four functions are one allocator family (mimalloc), never return null
        // for non-zero sizes except on exhaustion as malloc does, and align as malloc does; the
        // `Once` makes this the single call, made before any parser or tree exists (every
        // tree-sitter object in this crate is created after `new_parser` or the syntax
        // module's kind/field tables, which call this first).
        unsafe {
            tree_sitter::set_allocator(Some(tree_sitter::Allocator {
                malloc: libmimalloc_sys::mi_malloc,
                calloc: libmimalloc_sys::mi_calloc,
                realloc: libmimalloc_sys::mi_realloc,
                free: libmimalloc_sys::mi_free,
            }));
        }
    });
}

/// mimalloc for every Rust allocation.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc.h (v2 and v3; libmimalloc-sys exports no constant).
#[cfg(target_os = "linux")]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Process-wide settings; call first thing in `main`, before any other thread exists.
pub fn tune_process() {
    limit_glibc_arenas();
    disable_huge_pages();
}

/// glibc gives a threaded process up to 8 malloc arenas per core and keeps freed memory in
/// each: a batch run with ~60 threads measured 579 MB resident where 2 arenas gave 314 MB (with
/// glibc for everything). With mimalloc, `MALLOC_ARENA_MAX=16` (glibc's default here) still
/// measured 315 MB where 2 arenas gave 195 MB (scripts/bench-batch-llm.sh 40). Two arenas cost
/// no measurable throughput (I/O-bound work).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn limit_glibc_arenas() {
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: called first thing in main, before any other thread exists; mallopt only
        // adjusts allocator parameters.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn limit_glibc_arenas() {}

/// What mimalloc does itself for `MIMALLOC_ALLOW_THP=0`, but effective for the arena it
/// reserved before `main`: the kernel flag covers every mapping of the process (and is
/// inherited by child processes, which is harmless).
#[cfg(target_os = "linux")]
fn disable_huge_pages() {
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
        // SAFETY: prctl with PR_SET_THP_DISABLE only sets a flag of this process.
        unsafe {
            libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn disable_huge_pages() {}

/// Freed memory goes back to the OS at once (a batch holds many submissions' garbage at once).
pub fn prefer_low_memory() {
    #[cfg(target_os = "linux")]
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: mi_option_set only stores the option (atomically); mimalloc reads it on each
        // purge. Not `_default`: the option was initialised at the first purge already.
        unsafe {
            libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
        }
    }
}
