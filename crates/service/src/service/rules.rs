//! The review rules of the caller's organization: read, and replaced with the change on the
//! record ([`crate::review_rules`]).

use recruit_domain::model::ReviewRules;
use recruit_ports::review::RulesWrite;

use super::Service;
use super::ledger::audit_record;
use crate::error::ServiceError;
use crate::input::{BodyParams, NoParams};
use crate::operation::{Caller, OperationKind, RequestContext};

impl Service {
    /// The rules the caller's organization's monthly review flags accounts by.
    pub(crate) async fn review_rules(
        &self,
        caller: &Caller,
        _: &RequestContext,
        NoParams { problems }: NoParams,
    ) -> Result<ReviewRules, ServiceError> {
        if !problems.is_empty() {
            return Err(ServiceError::validation(problems));
        }
        Ok(self.store.organization(caller.token.organization_id).await?.review_rules)
    }

    /// Replaces the caller's organization's review rules: the members given, the others their
    /// defaults. The new rules are recorded in the API audit ledger with the change, so that
    /// what the review flags by is itself on the record.
    pub(crate) async fn set_review_rules(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: BodyParams,
    ) -> Result<ReviewRules, ServiceError> {
        let kind = OperationKind::SetPrivacyReviewRules;
        let mut problems = params.problems;
        let rules =
            params.body.and_then(|body| crate::review_rules::rules_body(&body, &mut problems));
        let (Some(rules), true) = (rules, problems.is_empty()) else {
            return Err(ServiceError::validation(problems));
        };
        let filters = serde_json::to_value(&rules).map_err(|e| {
            ServiceError::internal_because(format!("the rules could not be serialized: {e}"))
        })?;
        let record = audit_record(caller, context, kind, filters, None);
        let organization = caller.token.organization_id;
        let write = RulesWrite { organization, rules, record };
        self.store.set_review_rules(&write).await?;
        Ok(write.rules)
    }
}
