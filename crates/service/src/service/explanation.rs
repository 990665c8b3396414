//! The explanation of a download (소명): a reviewer asks, the person who downloaded is
//! e-mailed a one-time link and explains, the reviewer accepts (CONFIRMED) or rejects
//! (REJECTED). Each step is a decision on the download, kept with its record in the audit
//! ledgers; the review shows them all.

use std::net::IpAddr;

use recruit_domain::review::{DownloadReview, DownloadStatus, Person};
use recruit_domain::{AccountId, ErrorCode, Timestamp, UserId};
use recruit_ports::StoreError;
use recruit_ports::review::Author;

use super::Service;
use super::review::{Decision, target};
use crate::auth::SecretKind;
use crate::console::ExplanationPage;
use crate::error::ServiceError;
use crate::input::ExplainParams;
use crate::mail::{EXPLANATION_PAGE, ExplanationRequest, MailConfig};
use crate::operation::{Caller, OperationKind, RequestContext};
use crate::review::Month;

impl Service {
    /// The explanation of a download by the person who made it, while a reviewer's request
    /// for one is the latest decision on it (else CONFLICT). Any role; recorded like a
    /// decision, as the caller's.
    pub(crate) async fn explain_download(
        &self,
        caller: &Caller,
        context: &RequestContext,
        params: ExplainParams,
    ) -> Result<DownloadReview, ServiceError> {
        let kind = OperationKind::ExplainPrivacyAccessDownload;
        let mut problems = params.problems;
        let target = target(kind, context, &params.month, &params.entry_id, &mut problems);
        let text =
            params.body.and_then(|body| crate::sign_off::explanation_body(&body, &mut problems));
        let (Some((month, entry)), Some(text), true) = (target, text, problems.is_empty()) else {
            return Err(ServiceError::validation(problems));
        };
        let asked = DownloadStatus::ExplanationRequested.as_str();
        let decision = Decision {
            month,
            entry,
            status: DownloadStatus::Explained,
            reason: text,
            author: Author::Downloader { asked },
        };
        let (review, _, _) = self.decide(caller, context, kind, decision).await?;
        Ok(review)
    }

    /// Tells the person who made the download `asked` is about that a reviewer (`caller`)
    /// asks them to explain it: an e-mail with a one-time link to the explanation page. What
    /// was done, in words for the reviewer, and when the explanation is due.
    pub(super) async fn ask_for_explanation(
        &self,
        caller: &Caller,
        asked: &DownloadReview,
        zone: chrono_tz::Tz,
    ) -> (String, Option<Timestamp>) {
        let Some(mail) = &self.config.mail else {
            let notice = "No e-mail server is configured (--smtp-url): the request is recorded, \
                          but nobody was told. Ask the person who downloaded to answer it.";
            return (notice.to_owned(), None);
        };
        match self.mail_request(mail, caller, asked, zone).await {
            Ok((to, due)) => (format!("E-mailed to {to}."), Some(due)),
            Err(why) => {
                tracing::warn!(entry = %asked.entry_id, "a request for an explanation was not e-mailed: {why}");
                let notice = format!(
                    "The request is recorded, but it could not be e-mailed ({why}). Ask again \
                     with another question to send it again."
                );
                (notice, None)
            }
        }
    }

    async fn mail_request(
        &self,
        mail: &MailConfig,
        caller: &Caller,
        asked: &DownloadReview,
        zone: chrono_tz::Tz,
    ) -> Result<(String, Timestamp), String> {
        let organization = caller.token.organization_id;
        let month: Month = asked.month;
        let (review, _) =
            self.review_of(organization, month, "month").await.map_err(|e| e.message)?;
        let entry = asked.entry_id.to_string();
        let download = review
            .downloads
            .iter()
            .find(|d| d.id == entry)
            .ok_or("the download is no longer in the month's review")?;
        let account = AccountId::parse(&download.account_id).map_err(|e| e.to_string())?;
        let user = match self.store.user(organization, UserId::from_uuid(account.uuid())).await {
            Ok(user) => user,
            Err(StoreError::NotFound) => {
                return Err(format!(
                    "the account {account} is no user of the organization: there is nobody to \
                     e-mail"
                ));
            }
            Err(e) => return Err(e.to_string()),
        };
        let days =
            std::time::Duration::from_secs(u64::from(review.rules.explanation_days) * 86_400);
        let due = asked.reviewed_at.checked_add_duration(days).unwrap_or(Timestamp::MAX);
        let made = (
            organization,
            user.id,
            format!("explanation link of {entry}"),
            vec![],
            Some(crate::mail::link_expiry(due)),
        );
        let tokens: &dyn recruit_ports::Tokens = self.store.as_ref();
        let (_, secret) = crate::auth::create_credential(tokens, SecretKind::ExplanationLink, made)
            .await
            .map_err(|e| e.to_string())?;
        let month = month.to_string();
        let link =
            mail.link(EXPLANATION_PAGE, &[("month", &month), ("entry", &entry), ("link", &secret)]);
        let local = |t: Timestamp, format: &str| {
            t.as_datetime().with_timezone(&zone).format(format).to_string()
        };
        let request = ExplanationRequest {
            organization: &review.organization_name,
            reviewer: &caller.user.name,
            downloaded_at: local(download.access_time, "%Y-%m-%d %H:%M"),
            time_zone: zone.name(),
            menu_path: &download.access_menu_path,
            question: &asked.reason,
            due: local(due, "%Y-%m-%d %H:%M"),
            link,
        };
        let message = crate::mail::explanation_request((&user.name, &user.email), &request);
        mail.mailer.send(message).await?;
        Ok((user.email, due))
    }

    /// The caller an explanation link's secret stands for, if the link is live: UNAUTHENTICATED
    /// otherwise, charged to the client's address like a failed sign-in.
    pub async fn explanation_link(
        &self,
        secret: &str,
        client_ip: Option<IpAddr>,
    ) -> Result<Caller, ServiceError> {
        self.charged(client_ip, self.verify(Some(secret), SecretKind::ExplanationLink)).await
    }

    /// Spends the explanation link `caller` came with: it opens nothing more.
    pub async fn spend_explanation_link(&self, caller: &Caller) -> Result<(), ServiceError> {
        self.store.revoke_token(caller.token.id, Timestamp::now()).await?;
        Ok(())
    }

    /// What the explanation page of the download `entry` of `month` shows its holder
    /// (`caller`, by an explanation link): NOT_FOUND unless the download is theirs. It shows
    /// the person their own download and the exchange about it, nothing of anyone else's.
    pub async fn explanation_page(
        &self,
        caller: &Caller,
        month: &str,
        entry: &str,
    ) -> Result<ExplanationPage, ServiceError> {
        let mut problems = vec![];
        let month = super::review::month(&mut problems, "month", month);
        let Some(month) = month else {
            return Err(ServiceError::validation(problems));
        };
        let organization = caller.token.organization_id;
        let _slot = self.heavy_read()?;
        let (review, _) = self.review_of(organization, month, "month").await?;
        let not_yours = || {
            ServiceError::new(
                ErrorCode::NotFound,
                "This link names no download of yours: open the link of the latest e-mail.",
            )
        };
        let download = review
            .downloads
            .iter()
            .find(|d| d.id == entry && d.downloaded_by(caller.user.id))
            .ok_or_else(not_yours)?
            .clone();
        let asked_by =
            download.question().and_then(|q| review.person(q.reviewed_by.uuid())).cloned();
        Ok(ExplanationPage {
            organization_name: review.organization_name.clone(),
            time_zone: review.time_zone.parse().map_err(|_| not_yours())?,
            month,
            person: Person::of(&caller.user),
            download,
            asked_by,
        })
    }
}
