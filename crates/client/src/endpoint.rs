//! The operations of the API this client calls, each with its id in the OpenAPI document, its
//! method and its path: every request's URL is made from one of them, its path segments
//! percent-encoded. The server's tests hold this list to the server's operations.

use reqwest::Url;

use crate::Error;

/// An operation of the API: its id in the OpenAPI document, its method, and its path with a
/// `{name}` for each segment a call fills in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The operation's id (`getJob`).
    pub operation_id: &'static str,
    /// The HTTP method (`GET`).
    pub method: &'static str,
    /// The path (`/v1/jobs/{jobId}`).
    pub path: &'static str,
}

const fn endpoint(
    operation_id: &'static str,
    method: &'static str,
    path: &'static str,
) -> Endpoint {
    Endpoint { operation_id, method, path }
}

pub(crate) const LIST_PRIVACY_AUDIT_LOGS: Endpoint =
    endpoint("listPrivacyAuditLogs", "GET", "/v1/audit-logs/privacy");
pub(crate) const EXPORT_PRIVACY_AUDIT_LOGS: Endpoint =
    endpoint("exportPrivacyAuditLogs", "GET", "/v1/audit-logs/privacy/export");
pub(crate) const GET_PRIVACY_ACCESS_REVIEW: Endpoint =
    endpoint("getPrivacyAccessReview", "GET", "/v1/audit-logs/privacy/reviews/{month}");
pub(crate) const REVIEW_PRIVACY_ACCESS_DOWNLOAD: Endpoint = endpoint(
    "reviewPrivacyAccessDownload",
    "PUT",
    "/v1/audit-logs/privacy/reviews/{month}/downloads/{entryId}",
);
pub(crate) const SIGN_OFF_PRIVACY_ACCESS_REVIEW: Endpoint = endpoint(
    "signOffPrivacyAccessReview",
    "POST",
    "/v1/audit-logs/privacy/reviews/{month}/sign-off",
);
pub(crate) const GET_PRIVACY_REVIEW_RULES: Endpoint =
    endpoint("getPrivacyReviewRules", "GET", "/v1/audit-logs/privacy/review-rules");
pub(crate) const SET_PRIVACY_REVIEW_RULES: Endpoint =
    endpoint("setPrivacyReviewRules", "PUT", "/v1/audit-logs/privacy/review-rules");
pub(crate) const EXPLAIN_PRIVACY_ACCESS_DOWNLOAD: Endpoint = endpoint(
    "explainPrivacyAccessDownload",
    "PUT",
    "/v1/audit-logs/privacy/reviews/{month}/downloads/{entryId}/explanation",
);
pub(crate) const GET_LATEST_CHECKPOINT: Endpoint = endpoint(
    "getLatestPrivacyAuditLogCheckpoint",
    "GET",
    "/v1/audit-logs/privacy/checkpoints/latest",
);
pub(crate) const RECORD_PRIVACY_ACCESSES: Endpoint =
    endpoint("recordPrivacyAccesses", "POST", "/v1/audit-logs/privacy");
pub(crate) const GET_JOB: Endpoint = endpoint("getJob", "GET", "/v1/jobs/{jobId}");
pub(crate) const GET_ORGANIZATION: Endpoint =
    endpoint("getOrganization", "GET", "/v1/organization");
pub(crate) const GET_USER: Endpoint = endpoint("getUser", "GET", "/v1/users/{userId}");
pub(crate) const UPDATE_USER: Endpoint = endpoint("updateUser", "PATCH", "/v1/users/{userId}");
pub(crate) const GET_ME: Endpoint = endpoint("getMe", "GET", "/v1/me");
pub(crate) const GET_SINGLE_SIGN_ON: Endpoint =
    endpoint("getSingleSignOn", "GET", "/v1/organization/sso");
pub(crate) const SET_SINGLE_SIGN_ON: Endpoint =
    endpoint("setSingleSignOn", "PUT", "/v1/organization/sso");
pub(crate) const REMOVE_SINGLE_SIGN_ON: Endpoint =
    endpoint("removeSingleSignOn", "DELETE", "/v1/organization/sso");
pub(crate) const LIST_LOG_STREAMS: Endpoint = endpoint("listLogStreams", "GET", "/v1/log-streams");
pub(crate) const CREATE_LOG_STREAM: Endpoint =
    endpoint("createLogStream", "POST", "/v1/log-streams");
pub(crate) const GET_LOG_STREAM: Endpoint =
    endpoint("getLogStream", "GET", "/v1/log-streams/{streamId}");
pub(crate) const UPDATE_LOG_STREAM: Endpoint =
    endpoint("updateLogStream", "PATCH", "/v1/log-streams/{streamId}");
pub(crate) const PAUSE_LOG_STREAM: Endpoint =
    endpoint("pauseLogStream", "POST", "/v1/log-streams/{streamId}/pause");
pub(crate) const RESUME_LOG_STREAM: Endpoint =
    endpoint("resumeLogStream", "POST", "/v1/log-streams/{streamId}/resume");
pub(crate) const ROTATE_LOG_STREAM_SECRET: Endpoint =
    endpoint("rotateLogStreamSecret", "POST", "/v1/log-streams/{streamId}/rotate-secret");
pub(crate) const DELETE_LOG_STREAM: Endpoint =
    endpoint("deleteLogStream", "DELETE", "/v1/log-streams/{streamId}");
/// The checkpoint keys: served beside the API, not one of its operations.
pub(crate) const CHECKPOINT_KEYS: &str = "/.well-known/recruitd-checkpoint-keys";

/// Every operation of the API, each called by a method of [`crate::Client`].
pub const ENDPOINTS: [Endpoint; 26] = [
    LIST_PRIVACY_AUDIT_LOGS,
    EXPORT_PRIVACY_AUDIT_LOGS,
    GET_PRIVACY_ACCESS_REVIEW,
    REVIEW_PRIVACY_ACCESS_DOWNLOAD,
    SIGN_OFF_PRIVACY_ACCESS_REVIEW,
    GET_PRIVACY_REVIEW_RULES,
    SET_PRIVACY_REVIEW_RULES,
    EXPLAIN_PRIVACY_ACCESS_DOWNLOAD,
    GET_LATEST_CHECKPOINT,
    RECORD_PRIVACY_ACCESSES,
    GET_JOB,
    GET_ORGANIZATION,
    GET_USER,
    UPDATE_USER,
    GET_ME,
    GET_SINGLE_SIGN_ON,
    SET_SINGLE_SIGN_ON,
    REMOVE_SINGLE_SIGN_ON,
    LIST_LOG_STREAMS,
    CREATE_LOG_STREAM,
    GET_LOG_STREAM,
    UPDATE_LOG_STREAM,
    PAUSE_LOG_STREAM,
    RESUME_LOG_STREAM,
    DELETE_LOG_STREAM,
    ROTATE_LOG_STREAM_SECRET,
];

impl Endpoint {
    /// The URL of this operation under `base`, its `{…}` segments filled with `segments` in
    /// order (each percent-encoded as one segment), with the query `query`.
    pub(crate) fn url(
        &self,
        base: &Url,
        segments: &[String],
        query: &[(&str, String)],
    ) -> Result<Url, Error> {
        let mut url = base.clone();
        let mut given = segments.iter();
        {
            let mut path = url.path_segments_mut().map_err(|()| {
                Error::Config(format!("{base} cannot be the base of a URL with a path"))
            })?;
            path.pop_if_empty();
            for piece in self.path.split('/').filter(|p| !p.is_empty()) {
                match piece.starts_with('{') {
                    true => path.push(given.next().ok_or_else(|| self.misfilled(segments))?),
                    false => path.push(piece),
                };
            }
        }
        if given.next().is_some() {
            return Err(self.misfilled(segments));
        }
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        Ok(url)
    }

    fn misfilled(&self, segments: &[String]) -> Error {
        Error::Request(format!("{} takes other segments than {segments:?}", self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_encoded_each_as_one_and_the_base_path_is_kept() {
        let base = Url::parse("https://h.example/api").unwrap();
        let url = REVIEW_PRIVACY_ACCESS_DOWNLOAD
            .url(&base, &["2026-10".into(), "a/b?c#d".into()], &[])
            .unwrap();
        assert_eq!(
            url.as_str(),
            "https://h.example/api/v1/audit-logs/privacy/reviews/2026-10/downloads/a%2Fb%3Fc%23d"
        );
        let root = Url::parse("http://127.0.0.1:8080").unwrap();
        let query = [("limit", "5".to_owned()), ("cursor", "x&y".to_owned())];
        let url = LIST_PRIVACY_AUDIT_LOGS.url(&root, &[], &query).unwrap();
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:8080/v1/audit-logs/privacy?limit=5&cursor=x%26y"
        );
        for wrong in [vec![], vec!["2026-10".to_owned(), "e".into(), "extra".into()]] {
            let e = REVIEW_PRIVACY_ACCESS_DOWNLOAD.url(&root, &wrong, &[]).unwrap_err();
            assert!(matches!(e, Error::Request(_)), "{e}");
        }
    }

    #[test]
    fn every_operation_is_listed_once() {
        let mut ids: Vec<&str> = ENDPOINTS.iter().map(|e| e.operation_id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), ENDPOINTS.len());
    }
}
