//! The translations of the ledgers' rows (the privacy ledger's and the two audit ledgers'),
//! the rows that record accesses and reads, and the idempotency keys' rows.

use recruit_domain::model::{AccessData, ActivityCategory};
use recruit_domain::{AccountId, Id, PrivacyAuditLog};

use super::{AuditRow, IdempotencyRow, LedgerRow, ToolAuditRow, corrupt};
use crate::columns::SubjectColumns;
use crate::{
    AccessesWrite, AuditEntry, Interface, KeyClaim, LedgerEntry, StoreError, StoredKey,
    StoredResponse, ToolAuditEntry,
};

impl LedgerRow {
    /// The row of a ledger entry. Fails only for a bulk count no store can hold.
    pub fn new(e: &LedgerEntry) -> Result<Self, StoreError> {
        let l = &e.entry;
        let s = SubjectColumns::from_subject(&l.data_subject)?;
        Ok(Self {
            organization_id: e.organization_id.uuid(),
            id: l.id.uuid(),
            access_time: l.access_time,
            account_id: l.account_id.uuid(),
            ip_addresses: l.ip_addresses.clone(),
            subject_type: s.subject_type,
            subject_user_id: s.user_id,
            subject_candidate_id: s.candidate_id,
            bulk_count: s.bulk_count,
            query_type: s.query_type,
            query_ids: s.query_ids,
            query_values: s.query_values,
            query_scope: s.query_scope,
            access_data: l.access_data.iter().map(|a| a.as_str().to_owned()).collect(),
            access_menu: l.access_menu.clone(),
            access_menu_path: l.access_menu_path.clone(),
            activity_category: l.activity_category.as_str().into(),
            purpose: l.purpose.clone(),
            position: None,
            prev_hash: None,
            hash: None,
        })
    }

    /// The entry with the organization whose ledger holds it.
    pub fn into_ledger_entry(self) -> Result<LedgerEntry, StoreError> {
        let organization_id = Id::from_uuid(self.organization_id);
        Ok(LedgerEntry { organization_id, entry: self.into_entry()? })
    }

    /// The entry.
    pub fn into_entry(self) -> Result<PrivacyAuditLog, StoreError> {
        let subject = SubjectColumns {
            subject_type: self.subject_type,
            user_id: self.subject_user_id,
            candidate_id: self.subject_candidate_id,
            bulk_count: self.bulk_count,
            query_type: self.query_type,
            query_ids: self.query_ids,
            query_values: self.query_values,
            query_scope: self.query_scope,
        };
        Ok(PrivacyAuditLog {
            id: Id::from_uuid(self.id),
            access_time: self.access_time,
            account_id: AccountId::from_uuid(self.account_id),
            ip_addresses: self.ip_addresses,
            data_subject: subject.into_subject()?,
            access_data: self
                .access_data
                .iter()
                .map(|a| AccessData::from_wire(a).ok_or_else(|| corrupt("unknown access data")))
                .collect::<Result<_, _>>()?,
            access_menu: self.access_menu,
            access_menu_path: self.access_menu_path,
            activity_category: ActivityCategory::from(self.activity_category.as_str()),
            purpose: self.purpose,
        })
    }
}

/// The audit rows of several reads of the privacy ledger, written together (a group commit).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadRecords {
    /// The API audit ledger's rows, one per read.
    pub api: Vec<AuditRow>,
    /// The tool-interface audit ledger's rows, for the reads through a tool.
    pub tool: Vec<ToolAuditRow>,
}

/// A page of the privacy ledger as a store read it, and the audit rows that record the read.
#[derive(Debug)]
pub struct RecordedPage<T> {
    /// The page's rows, at most the limit.
    pub rows: Vec<T>,
    /// Whether more rows follow the page.
    pub more: bool,
    /// The API audit ledger's row.
    pub api: AuditRow,
    /// The tool-interface audit ledger's row, when the read came through a tool.
    pub tool: Option<ToolAuditRow>,
}

impl crate::ReadRecord {
    /// The page of `rows`, read with one more than `limit` to tell whether more follow, and
    /// the audit rows of this read, counting the entries the page returns.
    pub fn page<T>(&self, mut rows: Vec<T>, limit: usize) -> RecordedPage<T> {
        let more = rows.len() > limit;
        rows.truncate(limit);
        let api = AuditRow::new(&self.api, rows.len());
        let tool = self.tool.as_ref().map(|t| ToolAuditRow::new(t, rows.len()));
        RecordedPage { rows, more, api, tool }
    }
}

impl IdempotencyRow {
    /// The row of `claim`'s key, written with its request's `response`.
    pub fn completed(claim: &KeyClaim, response: &StoredResponse) -> Self {
        Self {
            organization_id: claim.organization_id.uuid(),
            key: claim.key.clone(),
            fingerprint: claim.fingerprint.to_vec(),
            expires_at: claim.expires_at,
            status: Some(i32::from(response.status)),
            response: Some(response.body.clone()),
            created_at: claim.now,
        }
    }

    /// What the store holds for the key; a row without a response (a request's claim kept by
    /// an earlier version) holds nothing.
    pub fn into_stored(self) -> Result<Option<StoredKey>, StoreError> {
        let response = match (self.status, self.response) {
            (Some(status), Some(body)) => StoredResponse {
                status: u16::try_from(status).map_err(|_| corrupt("an HTTP status"))?,
                body,
            },
            (None, None) => return Ok(None),
            _ => return Err(corrupt("a response without its status, or a status without it")),
        };
        Ok(Some(StoredKey { fingerprint: self.fingerprint, expires_at: self.expires_at, response }))
    }
}

/// The rows of recorded accesses: the ledger's, and the audit ledgers'.
#[derive(Clone, Debug, PartialEq)]
pub struct AccessRows {
    /// The privacy ledger's rows.
    pub privacy_audit_logs: Vec<LedgerRow>,
    /// The API audit ledger's row.
    pub api: AuditRow,
    /// The tool-interface audit ledger's row, for a request through a tool.
    pub tool: Option<ToolAuditRow>,
}

impl AccessRows {
    /// The rows of `write`. Fails only for an entry no store can hold.
    pub fn new(write: &AccessesWrite) -> Result<Self, StoreError> {
        let n = write.entries.len();
        Ok(Self {
            privacy_audit_logs: write
                .entries
                .iter()
                .map(LedgerRow::new)
                .collect::<Result<_, _>>()?,
            api: AuditRow::new(&write.record.api, n),
            tool: write.record.tool.as_ref().map(|t| ToolAuditRow::new(t, n)),
        })
    }
}

/// A count of entries as stored (a 32-bit integer column), saturating.
fn stored_count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

fn count(stored: i32) -> Result<u32, StoreError> {
    u32::try_from(stored).map_err(|_| corrupt("a negative count"))
}

impl AuditRow {
    /// The row of an API audit entry that saw `entries_returned` entries.
    pub fn new(e: &AuditEntry, entries_returned: usize) -> Self {
        Self {
            organization_id: e.organization_id.uuid(),
            id: e.id,
            at: e.at,
            token_id: e.token_id.uuid(),
            user_id: e.user_id.uuid(),
            operation: e.operation.clone(),
            request_id: e.request_id.clone(),
            client_ip: e.client_ip.clone(),
            filters: e.filters.clone(),
            entries_returned: stored_count(entries_returned),
            interface: e.interface.as_str().into(),
            tool_name: e.tool_name.clone(),
            position: None,
            prev_hash: None,
            hash: None,
        }
    }

    /// The entry.
    pub fn into_entry(self) -> Result<AuditEntry, StoreError> {
        Ok(AuditEntry {
            id: self.id,
            at: self.at,
            organization_id: Id::from_uuid(self.organization_id),
            token_id: Id::from_uuid(self.token_id),
            user_id: Id::from_uuid(self.user_id),
            operation: self.operation,
            request_id: self.request_id,
            client_ip: self.client_ip,
            filters: self.filters,
            entries_returned: count(self.entries_returned)?,
            interface: Interface::from_stored(&self.interface)
                .ok_or_else(|| corrupt("unknown interface"))?,
            tool_name: self.tool_name,
        })
    }
}

impl ToolAuditRow {
    /// The row of a tool-interface audit entry that saw `entries_returned` entries.
    pub fn new(e: &ToolAuditEntry, entries_returned: usize) -> Self {
        Self {
            organization_id: e.organization_id.uuid(),
            id: e.id,
            at: e.at,
            token_id: e.token_id.uuid(),
            user_id: e.user_id.uuid(),
            tool_name: e.tool_name.clone(),
            arguments: e.arguments.clone(),
            entries_returned: stored_count(entries_returned),
            request_id: e.request_id.clone(),
            position: None,
            prev_hash: None,
            hash: None,
        }
    }

    /// The entry.
    pub fn into_entry(self) -> Result<ToolAuditEntry, StoreError> {
        Ok(ToolAuditEntry {
            id: self.id,
            at: self.at,
            organization_id: Id::from_uuid(self.organization_id),
            token_id: Id::from_uuid(self.token_id),
            user_id: Id::from_uuid(self.user_id),
            tool_name: self.tool_name,
            arguments: self.arguments,
            entries_returned: count(self.entries_returned)?,
            request_id: self.request_id,
        })
    }
}
