fn main() {
    limit_malloc_arenas();
    tune_mimalloc();
    std::process::exit(auditor::cli::main());
}

/// glibc gives a threaded process up to 8 malloc arenas per core and keeps freed memory in
/// each: a batch run with ~60 threads measured 579 MB resident where 2 arenas gave 314 MB for
/// the same work. Rust allocations now go to mimalloc, but libgit2, SQLite and PDFium still
/// use glibc malloc: with mimalloc, `MALLOC_ARENA_MAX=16` (glibc's default here) still measured
/// 315 MB where 2 arenas gave 195 MB (scripts/bench-batch-llm.sh 40). Two arenas cost no
/// measurable throughput (I/O-bound work). A user's own `MALLOC_ARENA_MAX` wins.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn limit_malloc_arenas() {
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: called first thing in main, before any other thread exists; mallopt only
        // adjusts allocator parameters.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn limit_malloc_arenas() {}

/// mimalloc (the global allocator, `src/lib.rs`) with its default options held far more than
/// glibc did in `scripts/bench-batch-llm.sh` (200 submissions, --concurrency 32, ~70 threads,
/// debug binary): 934 MB resident instead of 123 MB, for two reasons:
///  1. it asks for transparent huge pages on its arenas (`madvise(MADV_HUGEPAGE)`), so every
///     2 MiB region touched by one of the threads' heaps became a whole resident huge page;
///  2. it returns freed pages to the OS only after 1 s (`purge_delay`), long enough to keep the
///     garbage of the detectives' burst of all running submissions.
///
/// Without both: 221 MB there, 40.7 MB instead of 94.3 MB in `scripts/bench-batch.sh`, 46 MB
/// instead of 80-95 MB for one audit of `auditor sample`. Set first thing in main;
/// `MIMALLOC_ALLOW_THP` / `MIMALLOC_PURGE_DELAY` in the environment win.
#[cfg(target_os = "linux")]
fn tune_mimalloc() {
    /// `mi_option_purge_delay` in mimalloc.h (v2 and v3; libmimalloc-sys exports no constant).
    const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
        // What mimalloc does itself for MIMALLOC_ALLOW_THP=0, but effective here for the
        // arena it already reserved before main. The kernel flag covers every mapping of the
        // process (and is inherited by child processes, which is harmless).
        // SAFETY: prctl with PR_SET_THP_DISABLE only sets a flag of this process.
        unsafe {
            libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
        }
    }
    // SAFETY: called first thing in main, before any other thread exists; mimalloc reads the
    // option on each purge. The `_default` variant leaves a value from the environment alone.
    unsafe {
        libmimalloc_sys::mi_option_set_default(MI_OPTION_PURGE_DELAY, 0);
    }
}

#[cfg(not(target_os = "linux"))]
fn tune_mimalloc() {}
