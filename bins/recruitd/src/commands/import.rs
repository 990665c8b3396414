//! `recruitd import`: JSON documents and NDJSON privacy ledgers, in the order given.

use std::path::PathBuf;

use recruit_ports::Store;
use recruit_service::import::{Progress, import_document, import_ndjson};

use crate::Failure;
use crate::output::print;

/// How many entries apart the import's progress is logged at `info`.
const IMPORT_PROGRESS_EVERY: usize = 50_000;

pub(crate) async fn import(
    store: &dyn Store,
    files: &[PathBuf],
    batch_size: usize,
) -> Result<(), Failure> {
    for file in files {
        let name = file.display().to_string();
        let is_ndjson = file.extension().is_some_and(|e| e == "ndjson");
        if is_ndjson {
            let mut last = 0;
            let done = import_ndjson(
                store,
                || std::fs::File::open(file).map(std::io::BufReader::new),
                batch_size,
                |progress: Progress| {
                    let Progress { written, already_stored, total } = progress;
                    if progress.done() == total || progress.done() >= last + IMPORT_PROGRESS_EVERY {
                        last = progress.done();
                        tracing::info!(file = %name, written, already_stored, total, "importing");
                    } else {
                        tracing::debug!(file = %name, written, already_stored, total, "importing");
                    }
                },
            )
            .await
            .map_err(|e| Failure(format!("{name}: {e}")))?;
            let already = match done.already_stored {
                0 => String::new(),
                n => format!(" ({n} were already there, from an earlier run, and were skipped)"),
            };
            print(&format!("{name}: imported {} privacy audit log entries{already}", done.written));
        } else {
            let text =
                std::fs::read_to_string(file).map_err(|e| Failure(format!("{name}: {e}")))?;
            let s =
                import_document(store, &text).await.map_err(|e| Failure(format!("{name}: {e}")))?;
            print(&format!(
                "{name}: imported {} organizations, {} users, {} task queues, {} candidates, {} jobs, \
                 {} privacy audit log entries",
                s.organizations, s.users, s.task_queues, s.candidates, s.jobs, s.privacy_audit_logs
            ));
        }
    }
    Ok(())
}
