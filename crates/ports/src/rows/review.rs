//! The translations of a review's rows: download decisions and sign-offs.

use recruit_domain::Id;

use super::{DownloadDecisionRow, SignOffRow};
use crate::review::{DownloadDecision, SignOffRecord};

impl DownloadDecisionRow {
    /// The row of a decision.
    pub fn new(d: &DownloadDecision) -> Self {
        Self {
            organization_id: d.organization_id.uuid(),
            id: d.id,
            month: d.month.clone(),
            entry_id: d.entry_id.uuid(),
            status: d.status.clone(),
            reason: d.reason.clone(),
            user_id: d.user_id.uuid(),
            token_id: d.token_id.uuid(),
            decided_at: d.at,
            request_id: d.request_id.clone(),
        }
    }

    /// The decision.
    pub fn into_decision(self) -> DownloadDecision {
        DownloadDecision {
            id: self.id,
            organization_id: Id::from_uuid(self.organization_id),
            month: self.month,
            entry_id: Id::from_uuid(self.entry_id),
            status: self.status,
            reason: self.reason,
            user_id: Id::from_uuid(self.user_id),
            token_id: Id::from_uuid(self.token_id),
            at: self.decided_at,
            request_id: self.request_id,
        }
    }
}

impl SignOffRow {
    /// The row of a sign-off.
    pub fn new(s: &SignOffRecord) -> Self {
        Self {
            organization_id: s.organization_id.uuid(),
            month: s.month.clone(),
            user_id: s.user_id.uuid(),
            signed_at: s.at,
            note: s.note.clone(),
            body: s.body.clone(),
        }
    }

    /// The sign-off.
    pub fn into_sign_off(self) -> SignOffRecord {
        SignOffRecord {
            organization_id: Id::from_uuid(self.organization_id),
            month: self.month,
            user_id: Id::from_uuid(self.user_id),
            at: self.signed_at,
            note: self.note,
            body: self.body,
        }
    }
}
