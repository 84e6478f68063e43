//! The course team's review history in the batch store (`auditor review`, `auditor serve`):
//! one append-only table of entries (an override of a criterion's score with its reason, a
//! submission marked reviewed or not, a comment for the student), each with who and when.
//!
//! The automatic score is never overwritten: an override is an entry beside the job, keyed
//! by submission and criterion, so it survives a regrade. Both backends refuse an `UPDATE` or
//! `DELETE` of an entry (a trigger), so the history cannot be rewritten through the store.

/// SQLite: created with the store (`IF NOT EXISTS`: an older store gains it on open).
pub const SQLITE: &str = "CREATE TABLE IF NOT EXISTS review_history (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        submission TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('override', 'reviewed', 'unreviewed', 'comment')),
        criterion_id TEXT,
        score INTEGER CHECK (score BETWEEN 1 AND 5),
        auto_score INTEGER,
        job_id INTEGER,
        text TEXT NOT NULL,
        by_name TEXT NOT NULL,
        created_at TEXT NOT NULL
     );
     CREATE INDEX IF NOT EXISTS review_history_submission ON review_history (submission, id);
     CREATE TRIGGER IF NOT EXISTS review_history_no_update BEFORE UPDATE ON review_history
        BEGIN SELECT RAISE(ABORT, 'the review history is append-only'); END;
     CREATE TRIGGER IF NOT EXISTS review_history_no_delete BEFORE DELETE ON review_history
        BEGIN SELECT RAISE(ABORT, 'the review history is append-only'); END;";

/// PostgreSQL: migration 3 (see [`super::store::postgres::MIGRATIONS`]).
pub const POSTGRES: &str = "CREATE TABLE auditor_review_history (
        id BIGSERIAL PRIMARY KEY,
        submission TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('override', 'reviewed', 'unreviewed', 'comment')),
        criterion_id TEXT,
        score INTEGER CHECK (score BETWEEN 1 AND 5),
        auto_score INTEGER,
        job_id BIGINT,
        text TEXT NOT NULL,
        by_name TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
     );
     CREATE INDEX auditor_review_history_submission ON auditor_review_history (submission, id);
     CREATE FUNCTION auditor_review_history_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'the review history is append-only'; END $$;
     CREATE TRIGGER auditor_review_history_append_only BEFORE UPDATE OR DELETE ON auditor_review_history
        FOR EACH ROW EXECUTE FUNCTION auditor_review_history_append_only();";
