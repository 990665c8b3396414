//! `recruitd audit`: list, export and review the ledgers, sign their chains' heads, write a key
//! to sign them with, and verify the chains (`verify`).

use std::path::Path;

use recruit_domain::OrganizationId;
use recruit_ports::{AuditListQuery, Store};
use recruit_service::checkpoint::CheckpointKey;
use recruit_service::replica::HeavyReads;

use crate::Failure;
use crate::cli::Ledger;
use crate::output::{json_line, print, print_json};

mod verify;

pub(crate) use verify::{audit_verify, audit_verify_stream};

pub(crate) async fn audit_list(
    store: &dyn Store,
    ledger: Ledger,
    org: Option<OrganizationId>,
    limit: u32,
    json: bool,
) -> Result<(), Failure> {
    let query = AuditListQuery { organization_id: org, limit };
    let lines: Vec<(String, String)> = match ledger {
        Ledger::Api => store
            .api_audit_entries(&query)
            .await?
            .iter()
            .map(|e| {
                let human = format!(
                    "{}  {}  {}  user {}  {} entries  via {}{}  request {}",
                    e.at,
                    e.organization_id,
                    e.operation,
                    e.user_id,
                    e.entries_returned,
                    e.interface.as_str(),
                    e.tool_name.as_deref().map(|t| format!(" ({t})")).unwrap_or_default(),
                    e.request_id
                );
                Ok((json_line(e)?, human))
            })
            .collect::<Result<_, Failure>>()?,
        Ledger::Tool => store
            .tool_audit_entries(&query)
            .await?
            .iter()
            .map(|e| {
                let human = format!(
                    "{}  {}  {}  user {}  {} entries  request {}",
                    e.at,
                    e.organization_id,
                    e.tool_name,
                    e.user_id,
                    e.entries_returned,
                    e.request_id
                );
                Ok((json_line(e)?, human))
            })
            .collect::<Result<_, Failure>>()?,
    };
    for (as_json, human) in lines {
        print(if json { &as_json } else { &human });
    }
    Ok(())
}

/// Writes an export to `file` (`-`: standard output): to `file.partial`, renamed once
/// complete and on disk, so that a file of that name is always a whole export.
pub(crate) async fn audit_export(
    heavy: &HeavyReads,
    query: &recruit_ports::chain::ExportQuery,
    file: &Path,
) -> Result<(), Failure> {
    let export = heavy.run("export", |store| async move { store.export(query).await }).await?;
    if file == Path::new("-") {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        recruit_service::export::write(export, query.ledger, &mut out).await?;
        return Ok(());
    }
    let written = recruit_service::export::write_file(export, query.ledger, file).await?;
    print(&format!("exported {written} {} ledger entries to {}", query.ledger, file.display()));
    Ok(())
}

/// `recruitd audit checkpoint`: signs the head of every chain (of `org`'s only, when given)
/// that moved since its last checkpoint with `key`, stores the checkpoints and prints them.
pub(crate) async fn audit_checkpoint(
    store: &dyn Store,
    key: &CheckpointKey,
    org: Option<OrganizationId>,
) -> Result<(), Failure> {
    for c in recruit_service::checkpoint::sign_heads(store, key, org).await? {
        print_json(&c)?;
    }
    Ok(())
}

/// `recruitd audit review`: one month of an organization's privacy ledger summarised. With
/// more than one organization stored and none named, it names them and reviews none.
pub(crate) async fn audit_review(
    store: &dyn Store,
    heavy: &HeavyReads,
    month: recruit_service::review::Month,
    org: Option<OrganizationId>,
    json: bool,
) -> Result<(), Failure> {
    let org = match org {
        Some(org) => org,
        None => match store.organizations().await?.as_slice() {
            [(one, _)] => *one,
            [] => return Err(Failure("no organization is stored: import one first".into())),
            several => {
                let names: Vec<String> =
                    several.iter().map(|(id, name)| format!("{id} ({name})")).collect();
                return Err(Failure(format!(
                    "several organizations are stored: choose one with --org: {}",
                    names.join(", ")
                )));
            }
        },
    };
    let review = heavy
        .run("review", |store| async move {
            recruit_service::review::review(store.as_ref(), org, month).await
        })
        .await
        .map_err(|e| Failure(format!("cannot review {org}: {e}")))?;
    if json {
        return print_json(&review);
    }
    print(&recruit_service::review::ReviewText(&review).to_string());
    Ok(())
}

/// Writes a new checkpoint key to `file`, readable by its owner only, never over a file.
pub(crate) fn keygen(file: &Path) -> Result<(), Failure> {
    let key = CheckpointKey::generate();
    crate::wiring::write_new_key(file, &key)?;
    print(&format!("wrote a new checkpoint key to {} (key id {})", file.display(), key.key_id()));
    print("its public key, for whoever verifies checkpoints:");
    print(recruit_service::checkpoint::public_pem(&key.public()).trim_end());
    Ok(())
}
